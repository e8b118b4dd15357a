package middleware_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware"
	"github.com/valyala/fasthttp"
)

// bareApp answers GET /me with a constant body after mw.
func bareApp(mw ...fx.Middleware) *fx.App {
	app := fx.New()
	app.Use(mw...)
	app.Get("/me", func(c *fx.Ctx) error { return c.String(200, "ok") })
	return app
}

// BenchmarkRateLimitBare is the bare route without RateLimit: the cost of
// fx itself, to subtract from the others.
func BenchmarkRateLimitBare(b *testing.B) {
	benchServe(b, bareApp(), "", "")
}

// BenchmarkRateLimit is a request allowed by RateLimit with the default
// memory store and KeyByIP. Every request comes from the same address, so
// all goroutines contend for one key's shard: the worst case.
func BenchmarkRateLimit(b *testing.B) {
	benchServe(b, bareApp(middleware.RateLimit(middleware.RateLimitConfig{
		Limit: middleware.Limit{Requests: 1 << 30, Period: time.Hour},
	})), "", "")
}

// BenchmarkRateLimitRefused is a request refused with 429: the envelope,
// Retry-After and the RateLimit fields.
func BenchmarkRateLimitRefused(b *testing.B) {
	app := bareApp(middleware.RateLimit(middleware.RateLimitConfig{
		Limit: middleware.Limit{Requests: 1, Period: time.Hour},
	}))
	if err := app.Boot(); err != nil {
		b.Fatal(err)
	}
	h := app.Handler()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var rc fasthttp.RequestCtx
		rc.Request.SetRequestURI("/me")
		h(&rc) // spends the burst
		for pb.Next() {
			rc.Response.Reset()
			h(&rc)
			if rc.Response.StatusCode() != 429 {
				b.Fatalf("status %d", rc.Response.StatusCode())
			}
		}
	})
}

// BenchmarkRateLimitManyKeys is BenchmarkRateLimit with one key per
// goroutine (a custom Key reading X-Client), so goroutines lock different
// shards: the usual case of many clients.
func BenchmarkRateLimitManyKeys(b *testing.B) {
	app := bareApp(middleware.RateLimit(middleware.RateLimitConfig{
		Limit: middleware.Limit{Requests: 1 << 30, Period: time.Hour},
		Key: func(c *fx.Ctx) (string, error) {
			return b2s(c.RequestCtx().Request.Header.Peek("X-Client")), nil
		},
	}))
	if err := app.Boot(); err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	kittest.BenchParallel(b, app.Handler(), "GET", "/me", 200, func(rc *fasthttp.RequestCtx) {
		rc.Request.Header.Set("X-Client", "client-"+strconv.FormatInt(n.Add(1), 10))
	})
}

// b2s views b as a string without copying; the store copies keys it keeps.
func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
