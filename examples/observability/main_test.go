package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/fxhq/fx/fxtest"
	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// One request through the whole wiring: the request ID is kept and echoed,
// the access log and the boundary's 5xx line carry it, the span has the
// caller's trace as parent and the route as name, and /metrics counts the
// request by route and code.
func TestObservabilityWiring(t *testing.T) {
	var logs bytes.Buffer
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	app, err := newApp(slog.New(slog.NewJSONHandler(&logs, nil)), tp, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	c := fxtest.New(t, app)

	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	c.Get("/users/missing").
		Header("X-Request-ID", "req-abc-1").
		Header("traceparent", "00-"+trace+"-00f067aa0ba902b7-01").
		Do().
		AssertError(404, "APP_USER_NOT_FOUND").
		AssertHeader("X-Request-ID", "req-abc-1")
	c.Get("/panic").Header("X-Request-ID", "req-abc-2").Do().AssertError(500, "FX_INTERNAL_ERROR")

	// Access log: one line per request with route, status, code and the ID;
	// the boundary's 5xx line carries the ID too.
	out := logs.String()
	for _, want := range []string{`"request_id":"req-abc-1"`, `"route":"/users/:id"`, `"APP_USER_NOT_FOUND"`, `"request_id":"req-abc-2"`} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %s:\n%s", want, out)
		}
	}
	if n := strings.Count(out, `"request_id":"req-abc-2"`); n < 2 {
		t.Errorf("the panic's request ID is on %d log lines, want the access line and the boundary's 5xx line:\n%s", n, out)
	}

	// The span continues the caller's trace and is named by the route.
	got := spans.GetSpans()
	if len(got) != 2 {
		t.Fatalf("%d spans, want 2", len(got))
	}
	if s := got[0]; s.Name != "GET /users/:id" || s.SpanContext.TraceID().String() != trace || s.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("span %q trace %s parent %s; want GET /users/:id in trace %s under 00f067aa0ba902b7",
			s.Name, s.SpanContext.TraceID(), s.Parent.SpanID(), trace)
	}

	// Prometheus counts by route pattern and code, never the raw path.
	metrics := string(c.Get("/metrics").Do().AssertStatus(200).Body)
	for _, want := range []string{
		`http_server_requests_total{code="APP_USER_NOT_FOUND",method="GET",route="/users/:id",status="404"} 1`,
		`http_server_requests_total{code="FX_INTERNAL_ERROR",method="GET",route="/panic",status="500"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s:\n%s", want, metrics)
		}
	}
	if strings.Contains(metrics, "/users/missing") {
		t.Error("metrics carry a raw path")
	}
}
