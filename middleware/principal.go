package middleware

import (
	"crypto/sha256"
	"slices"

	"github.com/fxhq/fx"
)

// Credential schemes a Principal can come from (Principal.Scheme).
const (
	SchemeBearer = "Bearer" // Authorization: Bearer <token> (RFC 6750)
	SchemeAPIKey = "APIKey" // an API key header
)

// Principal is a verified identity: who made the request and what it may
// do. A Verifier builds one; Auth stores it in the request and handlers read
// it with PrincipalFrom.
//
// A Principal may be shared between requests (NewAPIKeys hands out the same
// *Principal for every request with the same key): treat it as read-only.
type Principal struct {
	// Subject identifies the caller (the JWT "sub" claim, or the name given
	// to an API key).
	Subject string
	// Scheme is the credential scheme it was verified from: SchemeBearer or
	// SchemeAPIKey (or whatever a custom Verifier sets).
	Scheme string
	// Roles and Permissions are what RequireRoles and RequirePermissions
	// check. Order does not matter; comparison is exact (case-sensitive).
	Roles       []string
	Permissions []string
	// Tenant is the tenant the principal belongs to ("" when it carries no
	// tenant claim); Tenant with MatchPrincipal cross-checks it.
	Tenant string
	// Claims holds every claim of a JWT as decoded JSON (strings, float64,
	// bool, []any, map[string]any), or metadata of an API key. May be nil.
	Claims map[string]any
}

// HasRole reports whether p has role. It is a linear scan without
// allocation; a nil Principal has no roles.
func (p *Principal) HasRole(role string) bool {
	return p != nil && slices.Contains(p.Roles, role)
}

// HasPermission reports whether p has permission. It is a linear scan
// without allocation; a nil Principal has no permissions.
func (p *Principal) HasPermission(permission string) bool {
	return p != nil && slices.Contains(p.Permissions, permission)
}

// Claim returns the claim name and whether it is present. A nil Principal
// has no claims.
func (p *Principal) Claim(name string) (any, bool) {
	if p == nil {
		return nil, false
	}
	v, ok := p.Claims[name]
	return v, ok
}

// principalKey and authKey are the request-value keys. They are zero-size,
// so boxing them into an interface does not allocate.
type (
	principalKey struct{}
	authKey      struct{}
	tenantKey    struct{}
)

// PrincipalFrom returns the principal Auth verified for this request, or
// (nil, false) when there is none (Auth did not run, or ran with Optional
// and no credentials were sent). It does not allocate.
func PrincipalFrom(c *fx.Ctx) (*Principal, bool) {
	p, _ := c.Value(principalKey{}).(*Principal)
	return p, p != nil
}

// SetPrincipal stores p as the request's principal, for applications that
// authenticate in their own middleware (sessions, mTLS) but want
// RequireRoles, RequirePermissions, Tenant and PrincipalFrom to work with
// it. A nil p removes the principal. It does not allocate once the request
// has a value slot.
func SetPrincipal(c *fx.Ctx, p *Principal) {
	if p == nil {
		c.SetValue(principalKey{}, nil)
		return
	}
	c.SetValue(principalKey{}, p)
}

// CredentialDigest returns the SHA-256 of the credential Auth verified for
// the request's principal — the bearer token or the API key, exactly as
// sent — and false when there is none: no principal, Auth did not run,
// or the principal was set by SetPrincipal with a scheme Auth does not
// read. It identifies a caller whose principal carries no Subject (an API
// key configured without one, a JWT without a string "sub") without
// keeping the credential itself: package middleware/idempotency scopes such
// a caller's keys by it. Two credentials of one caller (a refreshed token)
// give two digests. Cost: one SHA-256 of the credential; no allocation.
func CredentialDigest(c *fx.Ctx) ([sha256.Size]byte, bool) {
	a, ok := c.Value(authKey{}).(*authenticator)
	p, ok2 := PrincipalFrom(c)
	if !ok || !ok2 {
		return [sha256.Size]byte{}, false
	}
	h := &c.RequestCtx().Request.Header
	var cred []byte
	switch {
	case p.Scheme == SchemeBearer && a.bearer != nil:
		v, _ := singleton(h, "Authorization")
		if tok, k := a.parseBearer(v); k == kMissing {
			cred = tok
		}
	case p.Scheme == SchemeAPIKey && a.apiKeys != nil:
		cred, _ = singleton(h, a.keyHeader)
	}
	if len(cred) == 0 {
		return [sha256.Size]byte{}, false
	}
	return sha256.Sum256(cred), true
}
