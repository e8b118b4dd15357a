package middleware_test

import (
	"log/slog"
	"os"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
)

// A request ID from the caller is kept when it is a safe token, echoed on
// the response (error envelopes and 404s included) and readable by
// handlers; otherwise one is generated.
func ExampleRequestID() {
	app := fx.New()
	app.Use(middleware.RequestID(middleware.RequestIDConfig{}))
	app.Get("/whoami", func(c *fx.Ctx) error {
		id, _ := middleware.RequestIDFrom(c)
		return c.String(200, "request "+id)
	})
	show(app, "/whoami", "X-Request-ID", "checkout-7f3a")
	show(app, "/nope", "X-Request-ID", "checkout-7f3b")
	// Output:
	// 200 request checkout-7f3a
	// 404 {"error":{"code":"FX_NOT_FOUND","message":"Route GET /nope not found"}}
}

// One line per request, with the final status and code, the route pattern
// and the request ID; a skip rule keeps health checks out. (Times are
// removed here so the output is stable.)
func ExampleAccessLog() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "duration" || a.Key == "ip" {
				return slog.Attr{}
			}
			return a
		},
	}))
	app := fx.New(fx.Config{Logger: logger})
	app.Use(middleware.RequestID(middleware.RequestIDConfig{}))
	app.OnResponse(middleware.AccessLog(middleware.AccessLogConfig{
		Skip: func(c *fx.Ctx) bool { return c.Route() == "/livez" },
	}))
	app.Get("/livez", func(c *fx.Ctx) error { return c.String(200, "ok") })
	app.Get("/users/:id", func(c *fx.Ctx) error {
		return fx.NewError(404, "APP_USER_NOT_FOUND", "User not found")
	})
	show(app, "/livez")
	show(app, "/users/7", "X-Request-ID", "req-1")
	// Output:
	// 200 ok
	// level=WARN msg=request method=GET route=/users/:id path=/users/7 status=404 code=APP_USER_NOT_FOUND bytes_in=0 bytes_out=66 request_id=req-1
	// 404 {"error":{"code":"APP_USER_NOT_FOUND","message":"User not found"}}
}

// A handler that overruns its deadline answers 504 FX_TIMEOUT, and
// whatever it wrote is discarded. The deadline is on c.Context(), so
// database calls and outgoing requests made with it stop in time.
func ExampleTimeout() {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Route(fx.Route{Method: "GET", Path: "/report",
		Middleware: []fx.Middleware{middleware.Timeout(50 * time.Millisecond)},
		Handler: func(c *fx.Ctx) error {
			select {
			case <-time.After(time.Second): // a slow query honouring its context
				return c.String(200, "report")
			case <-c.Context().Done():
				return c.Context().Err()
			}
		}})
	show(app, "/report")
	// Output:
	// 504 {"error":{"code":"FX_TIMEOUT","message":"The request was not handled in time"}}
}
