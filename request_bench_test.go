package fx_test

import (
	"io"
	"log/slog"
	"strconv"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/valyala/fasthttp"
)

// The benchmarks drive the App's fasthttp handler with one reused
// RequestCtx (no network), so they measure the framework: routing, the
// chain, the boundary and the envelope.

type small struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	OK   bool   `json:"ok"`
}

// errPrebuilt is an *fx.Error kept in a package variable, the cheap way to
// return expected failures.
var errPrebuilt = fx.NewError(409, "APP_CONFLICT", "The resource already exists")

// benchID is the variable part of the success body.
var benchID = 42

func benchApp() fasthttp.RequestHandler { return benchAppLogging(slog.LevelError) }

// benchAppLogging builds the benchmark App with a discarding logger enabled
// from level.
func benchAppLogging(level slog.Level) fasthttp.RequestHandler {
	app := fx.New(fx.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: level}))})
	app.Get("/json", func(c *fx.Ctx) error {
		// A value that is not a compile-time constant, so the interface
		// conversion is measured as it is in real handlers.
		return c.JSON(200, small{ID: benchID, Name: "fx", OK: benchID > 0})
	})
	app.Get("/error", func(c *fx.Ctx) error { return errPrebuilt })
	app.Get("/panic", func(c *fx.Ctx) error { panic("boom") })
	return app.Handler()
}

// benchCtx returns a RequestCtx set up for method and path, and a function
// that serves it once more (resetting only the response, as fasthttp does
// between requests on a connection).
func benchCtx(h fasthttp.RequestHandler, method, path string) (*fasthttp.RequestCtx, func()) {
	rc := kittest.RequestCtx(method, path)
	return rc, func() {
		rc.Response.Reset()
		h(rc)
	}
}

func runBench(b *testing.B, method, path string, wantStatus int) {
	kittest.Bench(b, benchApp(), method, path, wantStatus)
}

// BenchmarkJSONSuccess: c.JSON with a small struct.
func BenchmarkJSONSuccess(b *testing.B) { runBench(b, "GET", "/json", 200) }

// BenchmarkPrebuiltError: a route returning an *fx.Error from a variable.
func BenchmarkPrebuiltError(b *testing.B) { runBench(b, "GET", "/error", 409) }

// BenchmarkPanic: a route that panics (production 500; the panic is
// logged, here to a discarding handler at error level, stack included).
func BenchmarkPanic(b *testing.B) { runBench(b, "GET", "/panic", 500) }

// BenchmarkPanicUnlogged: the same with error logging disabled, which also
// skips capturing the stack: the cost of the boundary itself.
func BenchmarkPanicUnlogged(b *testing.B) {
	kittest.Bench(b, benchAppLogging(slog.LevelError+1), "GET", "/panic", 500)
}

// BenchmarkNotFound: an unmatched route.
func BenchmarkNotFound(b *testing.B) { runBench(b, "GET", "/nope/nothing/here", 404) }

// allocs measures allocations per request for method and path, after a
// warm-up that fills the pools.
func allocs(t *testing.T, method, path string, wantStatus int, wantBody string) float64 {
	t.Helper()
	rc, serve := benchCtx(benchApp(), method, path)
	for range 10 {
		serve()
	}
	if rc.Response.StatusCode() != wantStatus || string(rc.Response.Body()) != wantBody {
		t.Fatalf("%s %s: %d %q", method, path, rc.Response.StatusCode(), rc.Response.Body())
	}
	return testing.AllocsPerRun(1000, serve)
}

// The allocation budget of the request path, enforced: allocation counts
// are deterministic, so a regression fails here (timings are only
// reported by the benchmarks, never asserted).
func TestAllocationBudget(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("coverage instrumentation and the race detector change allocation counts")
	}
	cases := []struct {
		name, method, path string
		status             int
		body               string
		max                float64
	}{
		{"not found", "GET", "/nope/nothing/here", 404,
			`{"error":{"code":"FX_NOT_FOUND","message":"Route GET /nope/nothing/here not found"}}`, 0},
		{"prebuilt error", "GET", "/error", 409,
			`{"error":{"code":"APP_CONFLICT","message":"The resource already exists"}}`, 0},
		{"JSON success", "GET", "/json", 200, `{"id":42,"name":"fx","ok":true}`, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := allocs(t, tc.method, tc.path, tc.status, tc.body); got > tc.max {
				t.Errorf("%s %s: %.1f allocs/request, budget %.0f", tc.method, tc.path, got, tc.max)
			}
		})
	}
	// A panic caught at the top level costs no allocation of fx's own
	// (logging off: a logged panic captures its stack).
	t.Run("panic", func(t *testing.T) {
		rc, serve := benchCtx(benchAppLogging(slog.LevelError+1), "GET", "/panic")
		for range 10 {
			serve()
		}
		if rc.Response.StatusCode() != 500 {
			t.Fatalf("GET /panic: %d %q", rc.Response.StatusCode(), rc.Response.Body())
		}
		if got := testing.AllocsPerRun(200, serve); got > 0 {
			t.Errorf("GET /panic: %.1f allocs/request, budget 0", got)
		}
	})
}

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
