// Command observability wires fx's observability pieces together on one
// App: request IDs (middleware.RequestID), one access-log line per request
// (middleware.AccessLog, log/slog JSON on stderr), OpenTelemetry server
// spans and the http.server.request.duration histogram (fxotel, printing
// spans to stdout), and Prometheus metrics at /metrics (fxprom). Its
// WebSocket route, /echo, shows that a connection is observed by the same
// observers: one access-log line, one span and one Prometheus count when
// the connection ends, with its close code and reason and its messages
// and bytes each way.
//
// It is a module of its own (examples/observability/go.mod), so the
// OpenTelemetry and Prometheus dependencies never reach the core's go.mod.
//
//	cd examples/observability && go run .       # listens on 127.0.0.1:8081
//
//	curl -i localhost:8081/users/42                          # 200, X-Request-ID, a span on stdout
//	curl -i -H 'X-Request-ID: my-id-1' localhost:8081/users/missing   # 404 APP_USER_NOT_FOUND, ID kept
//	curl -i -H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' localhost:8081/users/7
//	curl -i localhost:8081/panic                             # 500, logged with its request_id
//	curl -s localhost:8081/metrics | grep http_server_requests_total
//
// /echo answers every message with the same message; "bye" ends the
// connection with close code 4410 and reason APP_BYE (4000 + the status
// of the handler's *fx.Error, its code as the reason).
//
// Every access-log line, and the boundary's 5xx line, carries request_id;
// the span of a request with a traceparent has that trace as its parent.
package main

import (
	"cmp"
	"context"
	"errors"
	"log"
	"log/slog"
	"os"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	fxotel "github.com/fxhq/fx/otel"
	fxprom "github.com/fxhq/fx/prometheus"
	"github.com/fxhq/fx/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func main() {
	exp, err := stdouttrace.New(stdouttrace.WithPrettyPrint())
	if err != nil {
		log.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	app, err := newApp(slog.New(slog.NewJSONHandler(os.Stderr, nil)), tp, prometheus.NewRegistry())
	if err != nil {
		log.Fatal(err)
	}
	app.OnShutdown(func() error { return tp.Shutdown(context.Background()) })
	addr := cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8081")
	if err := app.Run(context.Background(), addr); err != nil {
		log.Fatal(err)
	}
}

// newApp builds the service (shared with main_test.go). The order matters:
// fxotel.Instrument first (its middleware makes the span the parent of
// c.Context()), then RequestID, so every later middleware and the handler
// see the ID; AccessLog and the metrics observe the final response.
func newApp(logger *slog.Logger, tp *sdktrace.TracerProvider, reg *prometheus.Registry) (*fx.App, error) {
	app := fx.New(fx.Config{Logger: logger})
	if err := fxotel.Instrument(app, fxotel.Config{TracerProvider: tp}); err != nil {
		return nil, err
	}
	app.Use(middleware.RequestID(middleware.RequestIDConfig{}))
	app.OnResponse(middleware.AccessLog(middleware.AccessLogConfig{
		Skip: func(c *fx.Ctx) bool { return c.Route() == "/metrics" }, // scrapes are not traffic
	}))
	fxprom.Register(app, fxprom.Config{Registry: reg})

	app.Get("/users/:id", func(c *fx.Ctx) error {
		id := c.Param("id")
		if id == "missing" {
			return fx.NewError(404, "APP_USER_NOT_FOUND", "User not found", map[string]string{"id": id})
		}
		rid, _ := middleware.RequestIDFrom(c)
		return c.JSON(200, map[string]string{"id": id, "request_id": rid})
	})
	app.Get("/panic", func(c *fx.Ctx) error {
		panic(errors.New("something broke"))
	})
	// A plain GET (it documents its refusals; websocket.Route would also
	// document the 101), and this App documents nothing.
	app.Get("/echo", websocket.New(echo))
	return app, nil
}

// errBye ends an /echo connection: the client sees close code 4410 with
// reason APP_BYE, the observers see the request as a 101 whose error code
// is APP_BYE.
var errBye = fx.NewError(410, "APP_BYE", "The client said bye")

// echo sends every message back until the client closes or sends "bye".
func echo(c *websocket.Conn) error {
	for {
		t, p, err := c.ReadMessage()
		if err != nil {
			return nil // the client closed (its close is answered) or went away
		}
		if string(p) == "bye" {
			return errBye
		}
		if err := c.WriteMessage(t, p); err != nil {
			return nil
		}
	}
}
