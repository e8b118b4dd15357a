// Package idempotency makes retried POST and PATCH requests safe: a
// request carrying an Idempotency-Key runs its handler at most once per
// caller and key, and every retry gets the first response replayed
// (draft-ietf-httpapi-idempotency-key-header).
//
//	app.Use(middleware.Auth(auth), idempotency.New(idempotency.Config{}))
//	app.Post("/orders", createOrder) // a retry with the same key replays
//
// It is a package of its own so that the applications that do not use it
// link nothing of it; it depends on the root module only. Its Store is
// pluggable: MemoryStore (here) serves one instance, the Redis store of
// the module github.com/fxhq/fx/middleware/redisstore serves
// many. docs/idempotency.md walks through the protocol, what is stored,
// the fingerprint, the scoping and what happens when the store is down.
package idempotency
