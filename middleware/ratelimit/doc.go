// Package ratelimit limits how often each client may call a route: [New]
// returns the middleware, a [Limit] says how often (GCRA: a burst, then a
// steady rate, exact), a key function says who counts as one client
// ([KeyByIP], the default; [KeyByPrincipal], [KeyByAPIKey] and
// [KeyByTenant] after the middleware package's Auth or Tenant), and a
// [Store] holds the counts: [MemoryStore] in this process, or the Redis
// store of the module github.com/fxhq/fx/middleware/redisstore to share
// one limit between instances.
//
//	app.Use(ratelimit.New(ratelimit.Config{
//		Limit: ratelimit.Limit{Requests: 100, Period: time.Minute},
//	}))
//
// A refused request is answered 429 FX_RATE_LIMITED with Retry-After, and
// every request it decided carries the IETF RateLimit and
// RateLimit-Policy header fields. It declares both (fx.Declare), so the
// OpenAPI document and fxtest's strict mode know them.
package ratelimit
