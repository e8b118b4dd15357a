package idempotency_test

import (
	"strconv"
	"testing"

	"github.com/fxhq/fx"
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
	for _, tc := range []struct {
		name       string
		mw         bool
		sameKey    bool
		wantStatus int
	}{{"Bare", false, false, 201}, {"Memory", true, false, 201}, {"Replay", true, true, 201}} {
		b.Run(tc.name, func(b *testing.B) {
			app := quietApp()
			if tc.mw {
				// MaxKeys bounds the store, so a long run measures eviction too.
				app.Use(idempotency.New(idempotency.Config{ShareAnonymous: true, Store: idempotency.NewMemoryStore(idempotency.MemoryStoreConfig{MaxKeys: 1 << 16})}))
			}
			app.Post("/orders", func(c *fx.Ctx) error { return c.Send(201, "application/json", []byte(`{"id":1}`)) })
			h := app.Handler()
			var rc fasthttp.RequestCtx
			key := make([]byte, 0, 32)
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if !tc.sameKey {
					i++
				}
				rc.Request.Reset()
				rc.Response.Reset()
				rc.Request.Header.SetMethod("POST")
				rc.Request.SetRequestURI("/orders")
				key = append(strconv.AppendInt(key[:0], int64(i), 10), "-8e03978e-40d5-43e8-bc93"...)
				rc.Request.Header.SetBytesV(idempotency.HeaderKey, key)
				rc.Request.SetBodyString(`{"item":"book","qty":1}`)
				h(&rc)
				if rc.Response.StatusCode() != tc.wantStatus {
					b.Fatalf("status %d: %s", rc.Response.StatusCode(), rc.Response.Body())
				}
			}
		})
	}
}
