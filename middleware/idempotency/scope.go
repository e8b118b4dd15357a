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
// allocation.
func DefaultScope(c *fx.Ctx) (string, error) {
	tenant, _ := middleware.TenantFrom(c)
	var scheme, subject string
	if p, ok := middleware.PrincipalFrom(c); ok {
		scheme, subject = p.Scheme, p.Subject
	}
	// Length-prefixed, so no choice of values makes two scopes equal.
	b := make([]byte, 0, 16+len(tenant)+len(scheme)+len(subject))
	for _, s := range [...]string{tenant, scheme, subject} {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), nil // b is never written again
}
