package middleware_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
)

// The RequestID and AccessLog benchmarks serve GET /me, a bare route
// answering a constant text body, through the App's handler in process
// (benchServe); BenchmarkRequestIDBaseline is the same App without them,
// to subtract. Run them with
//
//	go test -run '^$' -bench 'RequestID|AccessLog' -benchmem ./middleware

func observeBenchApp(logLevel slog.Level, setup func(app *fx.App)) *fx.App {
	app := fx.New(fx.Config{Logger: slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: logLevel}))})
	setup(app)
	app.Get("/me", func(c *fx.Ctx) error { return c.String(200, "ok") })
	return app
}

func BenchmarkRequestIDBaseline(b *testing.B) {
	benchServe(b, observeBenchApp(slog.LevelInfo, func(*fx.App) {}), "", "")
}

// BenchmarkRequestIDGenerated: no incoming ID, one is generated.
func BenchmarkRequestIDGenerated(b *testing.B) {
	benchServe(b, observeBenchApp(slog.LevelInfo, func(app *fx.App) { app.Use(middleware.RequestID(middleware.RequestIDConfig{})) }), "", "")
}

// BenchmarkRequestIDIncoming: a UUID arrives and is kept.
func BenchmarkRequestIDIncoming(b *testing.B) {
	benchServe(b, observeBenchApp(slog.LevelInfo, func(app *fx.App) { app.Use(middleware.RequestID(middleware.RequestIDConfig{})) }),
		"X-Request-ID", "3f2c9a1e-7b4d-4c8e-9f10-2a3b4c5d6e7f")
}

// BenchmarkAccessLogDisabled: the logger is at error level, so the info
// line of a 200 is not produced.
func BenchmarkAccessLogDisabled(b *testing.B) {
	benchServe(b, observeBenchApp(slog.LevelError, func(app *fx.App) {
		app.OnResponse(middleware.AccessLog(middleware.AccessLogConfig{}))
	}), "", "")
}

// BenchmarkAccessLogJSON: every request logs its line with slog's JSON
// handler into io.Discard.
func BenchmarkAccessLogJSON(b *testing.B) {
	benchServe(b, observeBenchApp(slog.LevelInfo, func(app *fx.App) {
		app.OnResponse(middleware.AccessLog(middleware.AccessLogConfig{}))
	}), "", "")
}

// BenchmarkAccessLogJSONWithRequestID: both together, the usual setup.
func BenchmarkAccessLogJSONWithRequestID(b *testing.B) {
	benchServe(b, observeBenchApp(slog.LevelInfo, func(app *fx.App) {
		app.Use(middleware.RequestID(middleware.RequestIDConfig{}))
		app.OnResponse(middleware.AccessLog(middleware.AccessLogConfig{}))
	}), "", "")
}
