package ratelimit_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware/ratelimit"
	"github.com/valyala/fasthttp"
)

// bareHandler is the booted handler of an App answering GET /me with a
// constant body after mw.
func bareHandler(b *testing.B, mw ...fx.Middleware) fasthttp.RequestHandler {
	app := fx.New()
	app.Use(mw...)
	app.Get("/me", func(c *fx.Ctx) error { return c.String(200, "ok") })
	if err := app.Boot(); err != nil {
		b.Fatal(err)
	}
	return app.Handler()
}

// BenchmarkRateLimitBare is the bare route without a rate limit: the cost
// of fx itself, to subtract from the others.
func BenchmarkRateLimitBare(b *testing.B) {
	kittest.BenchParallel(b, bareHandler(b), "GET", "/me", 200, nil)
}

// BenchmarkRateLimit is a request allowed with the default memory store
// and KeyByIP. Every request comes from the same address, so all
// goroutines contend for one key's shard: the worst case.
func BenchmarkRateLimit(b *testing.B) {
	kittest.BenchParallel(b, bareHandler(b, ratelimit.New(ratelimit.Config{
		Limit: ratelimit.Limit{Requests: 1 << 30, Period: time.Hour},
	})), "GET", "/me", 200, nil)
}

// BenchmarkRateLimitRefused is a request refused with 429: the envelope,
// Retry-After and the RateLimit fields.
func BenchmarkRateLimitRefused(b *testing.B) {
	h := bareHandler(b, ratelimit.New(ratelimit.Config{
		Limit: ratelimit.Limit{Requests: 1, Period: time.Hour},
	}))
	kittest.BenchParallel(b, h, "GET", "/me", 429, func(rc *fasthttp.RequestCtx) {
		h(rc) // spends the burst
	})
}

// BenchmarkRateLimitManyKeys is BenchmarkRateLimit with one key per
// goroutine (a custom Key reading X-Client), so goroutines lock different
// shards: the usual case of many clients.
func BenchmarkRateLimitManyKeys(b *testing.B) {
	h := bareHandler(b, ratelimit.New(ratelimit.Config{
		Limit: ratelimit.Limit{Requests: 1 << 30, Period: time.Hour},
		Key: func(c *fx.Ctx) (string, error) {
			v := c.RequestCtx().Request.Header.Peek("X-Client")
			// The store copies the keys it keeps: viewing the header is safe.
			return unsafe.String(unsafe.SliceData(v), len(v)), nil
		},
	}))
	var n atomic.Int64
	kittest.BenchParallel(b, h, "GET", "/me", 200, func(rc *fasthttp.RequestCtx) {
		rc.Request.Header.Set("X-Client", "client-"+strconv.FormatInt(n.Add(1), 10))
	})
}
