package middleware

import (
	"github.com/fxhq/fx"
)

// RequireRoles returns middleware that lets a request through only when its
// principal has every one of roles.
//
//   - No principal (Auth did not run before it, or ran with Optional and
//     nothing was sent): 401 FX_UNAUTHENTICATED with the challenge of the
//     Auth that ran (or `Bearer realm="api"`), never 403 and never a panic.
//   - A principal missing a role: 403 FX_FORBIDDEN, reason "missing_role";
//     for a bearer principal also WWW-Authenticate error="insufficient_scope"
//     (RFC 6750 §3.1). The message does not list the roles.
//
// With no roles it only requires a principal. Cost: a scan of the
// principal's roles per required role; no allocation.
func RequireRoles(roles ...string) fx.Middleware {
	return requireAll(roles, (*Principal).HasRole, errMissingRole)
}

// RequirePermissions is RequireRoles for Principal.Permissions: 401 without
// a principal, 403 FX_FORBIDDEN (reason "missing_permission") when any of
// permissions is missing. No allocation.
func RequirePermissions(permissions ...string) fx.Middleware {
	return requireAll(permissions, (*Principal).HasPermission, errMissingPermission)
}

// requireAll is RequireRoles and RequirePermissions: the request's
// principal must pass has for every one of want, else the answer is e
// (a 403). want is copied.
func requireAll(want []string, has func(*Principal, string) bool, e *fx.Error) fx.Middleware {
	want = append([]string(nil), want...)
	return fx.Declare(func(c *fx.Ctx, next fx.Next) error {
		p, err := requirePrincipal(c)
		if err != nil {
			return err
		}
		for _, w := range want {
			if !has(p, w) {
				return forbid(c, p, e)
			}
		}
		return next()
	}, requireDeclaration)
}

// defaultChallenge is used when no Auth ran before an authorization check.
var defaultChallenge = `Bearer realm="` + DefaultRealm + `"`

// requirePrincipal returns the principal, or the 401 of a request without
// one, with the challenge of the Auth that let it through.
func requirePrincipal(c *fx.Ctx) (*Principal, error) {
	if p, ok := PrincipalFrom(c); ok {
		return p, nil
	}
	if a, ok := c.Value(authKey{}).(*authenticator); ok {
		return nil, a.fail(c, schBearer, kMissing)
	}
	c.SetHeader("WWW-Authenticate", defaultChallenge)
	return nil, authFailures[schBearer][kMissing]
}

// AuthenticatedSubject returns the Subject of the request's principal,
// for middleware that keys or counts by caller (package
// middleware/ratelimit's KeyByPrincipal and KeyByAPIKey). With scheme ""
// a principal of any scheme will do; with SchemeAPIKey (or another
// scheme) only one verified from it.
//
// Otherwise it returns a 401 FX_UNAUTHENTICATED and sets its
// WWW-Authenticate challenge (that of the Auth that ran, else a default
// realm "api" one): no principal, as RequireRoles answers (reason
// "missing_credentials"); a principal of another scheme, with the
// challenge of the scheme asked for (reason "missing_credentials"); a
// principal whose Subject is empty, a Verifier's bug failed closed
// rather than sharing one key between callers (reason
// "invalid_credentials"). No allocation, the refusal's challenge aside
// when no Auth ran.
func AuthenticatedSubject(c *fx.Ctx, scheme string) (string, error) {
	p, err := requirePrincipal(c)
	if err != nil {
		return "", err
	}
	switch {
	case scheme == SchemeAPIKey && p.Scheme != SchemeAPIKey:
		return "", unauthenticated(c, schAPIKey, kMissing, errAPIKeyRequired)
	case scheme != "" && p.Scheme != scheme:
		return "", unauthenticated(c, schBearer, kMissing, authFailures[schBearer][kMissing])
	case p.Subject == "":
		return "", unauthenticated(c, schBearer, kInvalid, authFailures[schBearer][kInvalid])
	}
	return p.Subject, nil
}

// errAPIKeyRequired is AuthenticatedSubject's 401 for a principal that did
// not come from an API key.
var errAPIKeyRequired = fx.NewCatalogError(fx.ErrorCodes.Unauthenticated,
	"Authentication required: this route needs an API key; send one",
	FailureDetails{Reason: ReasonMissingCredentials})

// unauthenticated sets the challenge of failure k of scheme s (that of
// the Auth that ran, or the default one) and returns e.
func unauthenticated(c *fx.Ctx, s scheme, k kind, e error) error {
	if a, ok := c.Value(authKey{}).(*authenticator); ok {
		c.SetHeader("WWW-Authenticate", a.challenges[s][k])
		return e
	}
	ch := defaultChallenge
	if s == schAPIKey {
		ch = `APIKey realm="` + DefaultRealm + `", header="` + DefaultAPIKeyHeader + `"`
	}
	c.SetHeader("WWW-Authenticate", ch)
	return e
}

// forbid returns a 403, with the RFC 6750 insufficient_scope challenge for
// bearer principals.
func forbid(c *fx.Ctx, p *Principal, e *fx.Error) error {
	if p.Scheme == SchemeBearer {
		if a, ok := c.Value(authKey{}).(*authenticator); ok {
			c.SetHeader("WWW-Authenticate", a.forbidden)
		}
	}
	return e
}

// Reasons of RequireRoles' and RequirePermissions' 403s (details.reason).
const (
	ReasonMissingRole       = "missing_role"       // 403
	ReasonMissingPermission = "missing_permission" // 403
)

var (
	errMissingRole = fx.NewCatalogError(fx.ErrorCodes.Forbidden,
		"Forbidden: the principal lacks a required role", FailureDetails{Reason: ReasonMissingRole})
	errMissingPermission = fx.NewCatalogError(fx.ErrorCodes.Forbidden,
		"Forbidden: the principal lacks a required permission", FailureDetails{Reason: ReasonMissingPermission})
)

// declForbidden is the 403 RequireRoles and RequirePermissions declare,
// written from the errors they send.
var declForbidden = DeclareFailures(errMissingRole, errMissingPermission)[0]

// requireDeclaration is what RequireRoles and RequirePermissions declare:
// 401 without a principal, 403 without the role or permission; they need
// an identity, so the route's security is not optional.
var requireDeclaration = fx.Declaration{
	Errors:           []*fx.Error{declUnauthenticated, declForbidden},
	RequiresIdentity: true,
	Headers:          []fx.HeaderDoc{challengeHeader},
}
