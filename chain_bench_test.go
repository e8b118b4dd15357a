package fx_test

import (
	"log/slog"
	"strconv"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
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
func BenchmarkHello(b *testing.B) { kittest.Bench(b, helloApp(false).Handler(), "GET", "/hello", 200) }

// BenchmarkMW3: the same route behind three pass-through middleware, one
// of each level: they are one chain, so the cost is the App's per level
// (no allocation).
func BenchmarkMW3(b *testing.B) { kittest.Bench(b, helloApp(true).Handler(), "GET", "/hello", 200) }

// TestMiddlewareLevelsAllocateNothing: App, Group and Route middleware are
// one chain fixed at Boot, so three levels cost no allocation over none;
// a chain built or state allocated per request would show up here.
func TestMiddlewareLevelsAllocateNothing(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("coverage instrumentation and the race detector change allocation counts")
	}
	per := func(levels bool) float64 {
		rc, serve := benchCtx(helloApp(levels).Handler(), "GET", "/hello")
		for range 10 {
			serve()
		}
		if rc.Response.StatusCode() != 200 {
			t.Fatalf("GET /hello: %d %q", rc.Response.StatusCode(), rc.Response.Body())
		}
		return testing.AllocsPerRun(1000, serve)
	}
	if bare, three := per(false), per(true); three > bare {
		t.Errorf("three middleware levels: %.1f allocs/request, none: %.1f", three, bare)
	}
}

// BenchmarkChainDepth isolates what a middleware level costs: a route whose
// handler writes nothing, behind 0 and 16 pass-through levels; the
// difference divided by 16 is the cost of one level.
func BenchmarkChainDepth(b *testing.B) {
	for _, n := range []int{0, 16} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
			for range n {
				app.Use(func(c *fx.Ctx, next fx.Next) error { return next() })
			}
			app.Get("/x", func(*fx.Ctx) error { return nil })
			kittest.Bench(b, app.Handler(), "GET", "/x", 200)
		})
	}
}
