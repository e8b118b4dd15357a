package fx_test

import (
	"log/slog"
	"testing"

	"github.com/fxhq/fx"
)

// The chain benchmarks measure what middleware costs per request: GET
// /hello with no middleware, and the same with three pass-through levels
// (one App, one Group, one Route middleware), through the booted handler.

func helloApp(levels bool) *fx.App {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	hello := func(c *fx.Ctx) error { return c.JSON(200, small{ID: benchID, Name: "fx", OK: true}) }
	pass := func(c *fx.Ctx, next fx.Next) error { return next() }
	if !levels {
		app.Get("/hello", hello)
		return app
	}
	app.Use(pass)
	app.Group("", pass).Route(fx.Route{Method: "GET", Path: "/hello", Middleware: []fx.Middleware{pass}, Handler: hello})
	return app
}

// BenchmarkHello: a static GET route writing a small JSON body.
func BenchmarkHello(b *testing.B) { runBenchWith(b, helloApp(false).Handler(), "GET", "/hello", 200) }

// BenchmarkMW3: the same route behind three pass-through middleware, one
// of each level: they are one chain, so the cost is the App's per level
// (no allocation).
func BenchmarkMW3(b *testing.B) { runBenchWith(b, helloApp(true).Handler(), "GET", "/hello", 200) }
