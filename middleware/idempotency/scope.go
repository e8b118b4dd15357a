package idempotency

import (
	"strconv"
	"unsafe"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
)

// DefaultScope is Config.Scope's default: the tenant middleware.Tenant
// resolved and the principal middleware.Auth (or SetPrincipal) verified,
// by scheme and subject. Two callers that differ in any of them never
// share a key, so neither can receive the other's stored response.
//
// A request without a principal is scoped by its tenant alone, shared by
// every anonymous caller of that tenant: on routes open to anonymous
// callers, a client that guesses another's key and sends the same body
// would get its replay. Put Auth before the middleware, or give a Scope
// that identifies anonymous callers (a session cookie). Cost: one small
// allocation, none when New uses it as the default (it writes the scope
// straight into the store key).
func DefaultScope(c *fx.Ctx) (string, error) {
	b := appendDefaultScope(nil, c)
	return unsafe.String(unsafe.SliceData(b), len(b)), nil // b is never written again
}

// appendDefaultScope appends DefaultScope's value to dst: tenant, scheme
// and subject, each length-prefixed, so no choice of values makes two
// scopes equal.
func appendDefaultScope(dst []byte, c *fx.Ctx) []byte {
	tenant, _ := middleware.TenantFrom(c)
	var scheme, subject string
	if p, ok := middleware.PrincipalFrom(c); ok {
		scheme, subject = p.Scheme, p.Subject
	}
	for _, s := range [...]string{tenant, scheme, subject} {
		dst = strconv.AppendInt(dst, int64(len(s)), 10)
		dst = append(dst, ':')
		dst = append(dst, s...)
	}
	return dst
}
