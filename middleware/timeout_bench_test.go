package middleware_test

import (
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware"
)

// benchBare runs GET /ok through the booted handler in process, one
// request at a time; the route answers a constant string, after asking for
// its context when withContext is set (as a handler passing it to a
// database call does).
func benchBare(b *testing.B, withContext bool, mw ...fx.Middleware) {
	app := fx.New(quiet)
	app.Use(mw...)
	app.Get("/ok", func(c *fx.Ctx) error {
		if withContext && c.Context().Err() != nil {
			return c.Context().Err()
		}
		return c.String(200, "ok")
	})
	kittest.Bench(b, app.Handler(), "GET", "/ok", 200)
}

// BenchmarkTimeoutBaseline: the bare route, for subtraction.
func BenchmarkTimeoutBaseline(b *testing.B) { benchBare(b, false) }

// BenchmarkTimeout: the same route behind Timeout(1s) (the deadline never
// fires), the handler not asking for its context: two clock reads, no
// timer.
func BenchmarkTimeout(b *testing.B) { benchBare(b, false, middleware.Timeout(time.Second)) }

// BenchmarkTimeoutNested: Timeout(1s) around Timeout(500ms).
func BenchmarkTimeoutNested(b *testing.B) {
	benchBare(b, false, middleware.Timeout(time.Second), middleware.Timeout(500*time.Millisecond))
}

// BenchmarkTimeoutContextBaseline: the handler asks for c.Context(), no
// Timeout (a context.WithCancel).
func BenchmarkTimeoutContextBaseline(b *testing.B) { benchBare(b, true) }

// BenchmarkTimeoutContext: the same behind Timeout(1s): the context is a
// context.WithDeadline (a runtime timer) instead.
func BenchmarkTimeoutContext(b *testing.B) { benchBare(b, true, middleware.Timeout(time.Second)) }
