package ratelimit

import (
	"net"
	"net/netip"
	"unsafe"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
)

// KeyByIP keys requests by the client's IP address, c.ClientAddr(): the
// connection's peer, or, when the peer is one of Config.TrustedProxies, the
// address those proxies forwarded (X-Forwarded-For or Forwarded, read
// right to left through trusted hops only, so a client cannot pick its own
// bucket by sending the header). An IPv4 address is keyed as its 4 bytes,
// an IPv6 address by its /64 prefix (8 bytes), since one host commonly
// holds a whole /64 and would otherwise get 2^64 buckets. The key is
// binary, not text. When the client is the peer itself (no trusted proxy
// in the way) it costs no allocation: it aliases the request's address,
// valid until the request ends (the nethttp adapter reuses it), which is
// what the Store contract expects; a forwarded address costs one small
// allocation. A connection without an IP address (a unix socket) reports
// 0.0.0.0, so all its requests share one bucket.
//
// Behind a proxy or load balancer that is not listed in
// Config.TrustedProxies every request comes from the proxy's address, so
// all clients share one bucket: list the proxy.
func KeyByIP(c *fx.Ctx) (string, error) {
	ip := c.RequestCtx().RemoteIP()
	if client := c.ClientAddr().Unmap(); client.IsValid() {
		if peer, ok := netip.AddrFromSlice(ip); !ok || peer.Unmap() != client {
			ip = client.AsSlice() // forwarded by a trusted proxy
		}
	}
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	} else if len(ip) == net.IPv6len {
		ip = ip[:8]
	}
	return unsafe.String(unsafe.SliceData(ip), len(ip)), nil
}

// KeyByPrincipal keys requests by the subject of the principal
// middleware.Auth (or middleware.SetPrincipal) stored: one bucket per user
// or service, whatever IP it calls from. Put Auth before the rate limit. A
// request without a principal, or with an empty Subject, is refused with
// 401 FX_UNAUTHENTICATED as middleware.RequireRoles refuses it
// (middleware.AuthenticatedSubject). No allocation.
//
// Subjects of different schemes share one key space (an API key named
// "alice" and a JWT whose sub is "alice" share a bucket); key by
// KeyByAPIKey on routes that take API keys only if that matters.
func KeyByPrincipal(c *fx.Ctx) (string, error) {
	return middleware.AuthenticatedSubject(c, "")
}

// KeyByAPIKey keys requests by the API key they were authenticated with:
// the Subject of a principal of scheme middleware.SchemeAPIKey (the name
// middleware.NewAPIKeys gives the key), never the secret itself, so no
// secret is written to a store. A request authenticated otherwise, or not
// at all, is refused with 401 FX_UNAUTHENTICATED and an APIKey challenge.
// No allocation (the refusal's challenge string aside, when no Auth ran).
func KeyByAPIKey(c *fx.Ctx) (string, error) {
	return middleware.AuthenticatedSubject(c, middleware.SchemeAPIKey)
}

// KeyByTenant keys requests by the tenant middleware.Tenant resolved: one
// bucket per tenant, shared by all its users. Put Tenant before the rate
// limit. A request without a tenant is refused with 400
// FX_TENANT_REQUIRED (reason "missing_tenant"). No allocation.
func KeyByTenant(c *fx.Ctx) (string, error) {
	if id, ok := middleware.TenantFrom(c); ok {
		return id, nil
	}
	return "", errNoTenant
}
