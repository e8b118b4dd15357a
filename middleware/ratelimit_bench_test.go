package middleware_test

import (
	"testing"
	"time"

	"github.com/fxhq/fx"
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
