package idempotency

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unsafe"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
)

// ErrNoScope is what a Config.Scope returns when nothing tells the
// request's caller from another (DefaultScope: a request without a
// principal). New then runs the request as if the middleware were absent:
// its response is neither stored nor replayed, so it can never be replayed
// to another caller (and a retry runs the handler again). The App's logger
// says so at most once a second.
var ErrNoScope = errors.New("idempotency: nothing identifies the request's caller; its response is not stored")

// DefaultScope is Config.Scope's default: the tenant middleware.Tenant
// resolved and the principal middleware.Auth (or SetPrincipal) verified,
// by scheme and identity. Two callers that differ in any of them never
// share a key, so neither can receive the other's stored response.
//
// The identity of a principal is, first found:
//
//   - its Subject;
//   - its "sub" claim when that is not a string (a JWT whose sub is the
//     number 1001): the claim's value, so 1001 and 1002 are two callers. A
//     number that JSON decoding may have rounded (not an integer, or beyond
//     ±2^53) does not count: two such subjects may have become one;
//   - else the credential it was verified from, hashed
//     (middleware.CredentialDigest, hashed again: the store never holds the
//     credential nor its plain digest). Two API keys configured without a
//     Subject are two callers; a JWT without "sub" is its own caller, and
//     a refreshed token a new one (its retries of the old token's keys run
//     again).
//
// A principal with none of them (set by SetPrincipal without Subject), and
// a request without a principal, get ErrNoScope: nothing is stored for
// them. Config.ShareAnonymous restores the scoping of requests without a
// principal by their tenant alone, shared by every anonymous caller of the
// tenant.
//
// Cost: one small allocation (none when New uses it as the default: it
// writes the scope straight into the store key); a principal without a
// Subject adds a claim lookup, or two SHA-256 of the credential.
func DefaultScope(c *fx.Ctx) (string, error) {
	b, ok := appendDefaultScope(nil, c, false)
	if !ok {
		return "", ErrNoScope
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), nil // b is never written again
}

// scopeDomain separates the credential hash of a scope from any other
// SHA-256 of the same credential (a Verifier that looks keys up by their
// digest).
const scopeDomain = "fx idempotency scope\x00"

// appendDefaultScope appends DefaultScope's value to dst: tenant, scheme
// and subject, each length-prefixed, so no choice of values makes two
// scopes equal; a principal without a Subject gets a fourth field, its
// identity tagged by kind ('n' a numeric sub, 'j' another JSON sub, 'c' a
// credential hash), which no three-field scope can equal. It reports false
// when nothing identifies the caller (see DefaultScope); shareAnonymous
// scopes a request without a principal by its tenant.
func appendDefaultScope(dst []byte, c *fx.Ctx, shareAnonymous bool) ([]byte, bool) {
	tenant, _ := middleware.TenantFrom(c)
	p, ok := middleware.PrincipalFrom(c)
	if !ok && !shareAnonymous {
		return dst, false
	}
	var scheme, subject string
	if ok {
		scheme, subject = p.Scheme, p.Subject
	}
	for _, s := range [...]string{tenant, scheme, subject} {
		dst = appendField(dst, s)
	}
	if !ok || subject != "" {
		return dst, true
	}
	switch sub := p.Claims["sub"].(type) {
	case float64:
		if sub == math.Trunc(sub) && math.Abs(sub) <= 1<<53 {
			n := strconv.AppendInt([]byte{'n'}, int64(sub), 10)
			return appendField(dst, unsafe.String(unsafe.SliceData(n), len(n))), true
		}
	case json.Number:
		return appendField(dst, "n"+string(sub)), true
	case nil, string: // absent, or "": no identity in the claim
	default: // a bool, an object...: its canonical JSON (sorted keys)
		if j, err := json.Marshal(sub); err == nil {
			return appendField(dst, "j"+string(j)), true
		}
	}
	d, ok := middleware.CredentialDigest(c)
	if !ok {
		return dst, false
	}
	h := sha256.New()
	h.Write([]byte(scopeDomain))
	h.Write(d[:])
	var sum [sha256.Size]byte
	var id [1 + 2*sha256.Size]byte
	id[0] = 'c'
	hex.Encode(id[1:], h.Sum(sum[:0]))
	return appendField(dst, string(id[:])), true
}

// appendField appends s length-prefixed: its length, ':' and s.
func appendField(dst []byte, s string) []byte {
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, ':')
	return append(dst, s...)
}
