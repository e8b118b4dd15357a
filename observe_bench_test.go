package fx_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
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

func BenchmarkOnResponse(b *testing.B) {
	for _, bc := range []struct {
		name      string
		observers int
		duration  bool
		path      string
		status    int
	}{
		{"None", 0, false, "/hello", 200},
		{"One", 1, false, "/hello", 200},
		{"OneDuration", 1, true, "/hello", 200},
		{"NoneError", 0, false, "/error", 409},
		{"OneError", 1, false, "/error", 409},
		{"NoneNotFound", 0, false, "/nope", 404},
		{"OneNotFound", 1, false, "/nope", 404},
	} {
		b.Run(bc.name, func(b *testing.B) {
			kittest.Bench(b, observedApp(bc.observers, bc.duration).Handler(), "GET", bc.path, bc.status)
		})
	}
}
