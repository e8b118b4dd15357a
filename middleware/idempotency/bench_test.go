package idempotency_test

import (
	"strconv"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/valyala/fasthttp"
)

// BenchmarkIdempotency is the cost of the middleware with the MemoryStore
// on a request that is not a retry (a fresh key each time: claim, run,
// store the response), beside the same route without it (Bare) and a
// retry answered from the store (Replay). Run with
//
//	go test -run '^$' -bench Idempotency -benchmem ./middleware/idempotency
//
// The Redis store's numbers: BenchmarkIdempotencyRedis in the redisstore
// module.
func BenchmarkIdempotency(b *testing.B) {
	key := make([]byte, 0, 32)
	freshKey := func(rc *fasthttp.RequestCtx, i int) {
		key = append(strconv.AppendInt(key[:0], int64(i), 10), "-8e03978e-40d5-43e8-bc93"...)
		rc.Request.Header.SetBytesV(idempotency.HeaderKey, key)
	}
	b.Run("Bare", func(b *testing.B) { kittest.BenchEach(b, orders(), order(), 201, freshKey) })
	b.Run("Memory", func(b *testing.B) { kittest.BenchEach(b, orders(memory()), order(), 201, freshKey) })
	b.Run("Replay", func(b *testing.B) { kittest.BenchEach(b, orders(memory()), order(), 201, nil) })
}

// orders is the handler of an App whose POST /orders answers 201 under mw.
func orders(mw ...fx.Middleware) fasthttp.RequestHandler {
	app := quietApp()
	app.Use(mw...)
	app.Post("/orders", func(c *fx.Ctx) error { return c.Send(201, "application/json", []byte(`{"id":1}`)) })
	return app.Handler()
}

// memory is the middleware on a MemoryStore of its own; MaxKeys bounds
// the store, so a long run measures eviction too.
func memory() fx.Middleware {
	return idempotency.New(idempotency.Config{ShareAnonymous: true, Store: idempotency.NewMemoryStore(idempotency.MemoryStoreConfig{MaxKeys: 1 << 16})})
}

// order is a POST /orders with a body and the key "replayed-order".
func order() *fasthttp.RequestCtx {
	rc := kittest.RequestCtx("POST", "/orders")
	rc.Request.Header.Set(idempotency.HeaderKey, "replayed-order")
	rc.Request.SetBodyString(`{"item":"book","qty":1}`)
	return rc
}
