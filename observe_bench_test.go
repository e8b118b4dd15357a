package fx_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/fxhq/fx"
)

// The OnResponse benchmarks measure what observation costs per request:
// a static route with a short text body, an *Error kept in a variable and
// the 404, with no observer (what every App pays: nothing), with one
// observer that reads status, code and route, and with one that also reads
// the Duration (one clock read). Run them with
//
//	go test -run '^$' -bench 'OnResponse' -benchmem .

var sinkDuration time.Duration

func observedApp(observers int, duration bool) *fx.App {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	for range observers {
		app.OnResponse(func(c *fx.Ctx) {
			if c.Status() == 0 {
				panic("unreachable")
			}
			_, _ = c.Route(), c.ErrorCode()
			if duration {
				sinkDuration = c.Duration()
			}
		})
	}
	app.Get("/hello", func(c *fx.Ctx) error { return c.String(200, "hello") })
	app.Get("/error", func(c *fx.Ctx) error { return errPrebuilt })
	return app
}

func BenchmarkOnResponseNone(b *testing.B) {
	runBenchWith(b, observedApp(0, false).Handler(), "GET", "/hello", 200)
}

func BenchmarkOnResponseOne(b *testing.B) {
	runBenchWith(b, observedApp(1, false).Handler(), "GET", "/hello", 200)
}

func BenchmarkOnResponseOneDuration(b *testing.B) {
	runBenchWith(b, observedApp(1, true).Handler(), "GET", "/hello", 200)
}

func BenchmarkOnResponseNoneError(b *testing.B) {
	runBenchWith(b, observedApp(0, false).Handler(), "GET", "/error", 409)
}

func BenchmarkOnResponseOneError(b *testing.B) {
	runBenchWith(b, observedApp(1, false).Handler(), "GET", "/error", 409)
}

func BenchmarkOnResponseNoneNotFound(b *testing.B) {
	runBenchWith(b, observedApp(0, false).Handler(), "GET", "/nope", 404)
}

func BenchmarkOnResponseOneNotFound(b *testing.B) {
	runBenchWith(b, observedApp(1, false).Handler(), "GET", "/nope", 404)
}
