package wasm_test

import (
	"bytes"
	"net/http/httptest"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/wasm"
)

// Benchmarks go through app.Test (an in-memory connection to the real
// fasthttp server), so they include HTTP parsing on both sides; Baseline
// is the same path with a plain Go handler.
//
//	go test ./wasm -run '^$' -bench . -benchmem

// wasmBench is an App the benchmarks measure and the request they send
// it, through app.Test (viaTest) and through its handler (direct).
type wasmBench struct {
	app            func(b *testing.B) *fx.App
	method, target string
	body           []byte
	status         int // of each response
}

var (
	baseline = wasmBench{func(b *testing.B) *fx.App {
		app, _ := newApp(b)
		app.Post("/", func(c *fx.Ctx) error { return c.String(200, "hello from go") })
		return app
	}, "POST", "/", nil, 200}
	watOK = wasmBench{func(b *testing.B) *fx.App {
		app, _ := newApp(b)
		wasm.Mount(app, "POST", "/", fixture(b, "ok"), wasm.Config{Cache: testCache})
		return app
	}, "POST", "/", nil, 200}
	goHello     = wasmBench{goGuestApp, "GET", "/hello", nil, 200}
	goGuestEcho = wasmBench{goGuestApp, "POST", "/users/42/echo?x=1", bytes.Repeat([]byte("a"), 1024), 201}
)

func goGuestApp(b *testing.B) *fx.App {
	app, _, _ := goApp(b, wasm.Config{})
	return app
}

func (w wasmBench) viaTest(b *testing.B) { benchApp(b, w.app(b), w.method, w.target, w.body) }
func (w wasmBench) direct(b *testing.B) {
	benchHandler(b, w.app(b), w.method, w.target, w.body, w.status)
}

func benchApp(b *testing.B, app *fx.App, method, target string, body []byte) {
	b.Helper()
	if err := app.Boot(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		resp, err := app.Test(httptest.NewRequest(method, target, bytes.NewReader(body)))
		if err != nil || resp.StatusCode >= 300 {
			b.Fatalf("%v %v", err, resp)
		}
	}
}

func BenchmarkBaseline(b *testing.B) { baseline.viaTest(b) }

func BenchmarkWAT(b *testing.B) { watOK.viaTest(b) }

func BenchmarkGoGuest(b *testing.B) { goHello.viaTest(b) }

func BenchmarkGoGuestEcho1KiB(b *testing.B) { goGuestEcho.viaTest(b) }

// BenchmarkWATParallel: many goroutines share the pool (GOMAXPROCS
// instances); BaselineParallel is the same without a guest.
func BenchmarkWATParallel(b *testing.B) { benchParallel(b, watOK.app(b)) }

func BenchmarkBaselineParallel(b *testing.B) { benchParallel(b, baseline.app(b)) }

func benchParallel(b *testing.B, app *fx.App) {
	if err := app.Boot(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := app.Test(httptest.NewRequest("POST", "/", nil))
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("%v %v", err, resp)
			}
		}
	})
}

// The Handler benchmarks call the App's fasthttp handler directly with a
// reused RequestCtx: no connection, no HTTP parsing, so they show what the
// guest round trip itself costs.

func benchHandler(b *testing.B, app *fx.App, method, target string, body []byte, status int) {
	b.Helper()
	if err := app.Boot(); err != nil {
		b.Fatal(err)
	}
	rc := kittest.RequestCtx(method, target)
	rc.Request.Header.Set("User-Agent", "bench")
	rc.Request.Header.Set("Accept", "*/*")
	rc.Request.SetBody(body)
	kittest.BenchCtx(b, app.Handler(), rc, status)
}

func BenchmarkHandlerBaseline(b *testing.B) { baseline.direct(b) }

func BenchmarkHandlerWAT(b *testing.B) { watOK.direct(b) }

func BenchmarkHandlerGoGuest(b *testing.B) { goHello.direct(b) }

func BenchmarkHandlerGoGuestEcho1KiB(b *testing.B) { goGuestEcho.direct(b) }

// BenchmarkHandlerGoGuestNoIdle keeps no warm instance (MaxIdle < 0): every
// request instantiates the Go guest, runs its _initialize and closes it,
// which is what pooling saves.
func BenchmarkHandlerGoGuestNoIdle(b *testing.B) {
	app, _, _ := goApp(b, wasm.Config{MaxIdle: -1})
	benchHandler(b, app, "GET", "/hello", nil, 200)
}

// BenchmarkCompileGoGuest is Compile (with the shared compilation cache
// warm) plus the first instantiation and Close.
func BenchmarkCompileGoGuest(b *testing.B) {
	bin := goGuest(b)
	for b.Loop() {
		m, err := wasm.Compile(bin, wasm.Config{Cache: testCache})
		if err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
}
