package fxotel_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/nethttp"
	fxotel "github.com/fxhq/fx/otel"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

type rig struct {
	app    *fx.App
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
}

func newRig(t testing.TB, cfg ...fx.Config) *rig {
	t.Helper()
	if len(cfg) == 0 {
		cfg = []fx.Config{{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	}
	r := &rig{app: fx.New(cfg...), spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	if err := fxotel.Instrument(r.app, fxotel.Config{TracerProvider: r.tp, MeterProvider: mp}); err != nil {
		t.Fatal(err)
	}
	return r
}

// only returns the one span ended so far.
func (r *rig) only(t testing.TB) sdktrace.ReadOnlySpan {
	t.Helper()
	ended := r.spans.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans ended, want 1", len(ended))
	}
	return ended[0]
}

func attrs(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

// checkSpan asserts name, kind, status and the listed attributes (a value
// nil: the attribute must be absent).
func checkSpan(t *testing.T, s sdktrace.ReadOnlySpan, name string, status codes.Code, want map[string]any) {
	t.Helper()
	if s.Name() != name {
		t.Errorf("span name %q, want %q", s.Name(), name)
	}
	if s.SpanKind() != trace.SpanKindServer {
		t.Errorf("span kind %v, want server", s.SpanKind())
	}
	if s.Status().Code != status {
		t.Errorf("span status %v, want %v", s.Status().Code, status)
	}
	got := attrs(s.Attributes())
	for k, w := range want {
		v, ok := got[attribute.Key(k)]
		switch {
		case w == nil && ok:
			t.Errorf("attribute %s = %v, want absent", k, v.String())
		case w == nil:
		case !ok:
			t.Errorf("attribute %s absent, want %v", k, w)
		case v.AsInterface() != w:
			t.Errorf("attribute %s = %#v, want %#v", k, v.AsInterface(), w)
		}
	}
}

// histogram returns the data points of http.server.request.duration.
func (r *rig) histogram(t *testing.T) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "http.server.request.duration" {
				continue
			}
			if m.Unit != "s" {
				t.Errorf("unit %q, want s", m.Unit)
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				t.Fatalf("data %T, want a float64 histogram", m.Data)
			}
			return h.DataPoints
		}
	}
	t.Fatal("no http.server.request.duration metric")
	return nil
}

// point returns the one data point whose attributes are exactly want.
func point(t *testing.T, pts []metricdata.HistogramDataPoint[float64], want map[string]any) metricdata.HistogramDataPoint[float64] {
	t.Helper()
	for _, p := range pts {
		got := attrs(p.Attributes.ToSlice())
		if len(got) != len(want) {
			continue
		}
		match := true
		for k, w := range want {
			if v, ok := got[attribute.Key(k)]; !ok || v.AsInterface() != w {
				match = false
			}
		}
		if match {
			return p
		}
	}
	var have []string
	for _, p := range pts {
		have = append(have, p.Attributes.Encoded(attribute.DefaultEncoder()))
	}
	t.Fatalf("no data point with %v; have %v", want, have)
	return metricdata.HistogramDataPoint[float64]{}
}

func TestSpanAndMetricPerOutcome(t *testing.T) {
	r := newRig(t)
	r.app.Get("/users/:id", func(c *fx.Ctx) error { return c.JSON(200, map[string]string{"id": c.Param("id")}) })
	r.app.Post("/users", func(c *fx.Ctx) error {
		return fx.NewError(422, fx.ErrorCodes.ValidationError, "bad user")
	})
	r.app.Get("/boom", func(c *fx.Ctx) error { panic("boom") })
	r.app.Get("/fail", func(c *fx.Ctx) error { return errors.New("db down") })
	r.app.Get("/teapot", func(c *fx.Ctx) error {
		return fx.NewError(503, "APP_MAINTENANCE", "later")
	})
	r.app.Get("/raw500", func(c *fx.Ctx) error {
		c.RequestCtx().SetStatusCode(500)
		return nil
	})
	// The hook replaces the 503 of /teapot with a 200: the span must end
	// with what the client got.
	r.app.OnError(func(c *fx.Ctx, err any) bool {
		if c.ErrorCode() == "APP_MAINTENANCE" || c.Path() == "/teapot" {
			c.RequestCtx().SetStatusCode(200)
			c.RequestCtx().SetBodyString(`{"ok":"hook"}`)
			return true
		}
		return false
	})
	cl := fxtest.New(t, r.app)

	cases := []struct {
		name, method, target string
		status               int
		span                 string
		spanStatus           codes.Code
		route, code          any
		exception            bool
	}{
		{"200", "GET", "/users/7", 200, "GET /users/:id", codes.Unset, "/users/:id", nil, false},
		{"404", "GET", "/nope", 404, "GET", codes.Unset, nil, "FX_NOT_FOUND", false},
		{"422", "POST", "/users", 422, "POST /users", codes.Unset, "/users", "FX_VALIDATION_ERROR", false},
		{"panic", "GET", "/boom", 500, "GET /boom", codes.Error, "/boom", "FX_INTERNAL_ERROR", true},
		{"500", "GET", "/fail", 500, "GET /fail", codes.Error, "/fail", "FX_INTERNAL_ERROR", true},
		{"hook-replaced", "GET", "/teapot", 200, "GET /teapot", codes.Unset, "/teapot", "APP_MAINTENANCE", false},
		{"handler-written 500", "GET", "/raw500", 500, "GET /raw500", codes.Error, "/raw500", "500", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r.spans.Reset()
			cl.Request(tc.method, tc.target).Header("User-Agent", "otel-test/1").Do().AssertStatus(tc.status)
			s := r.only(t)
			checkSpan(t, s, tc.span, tc.spanStatus, map[string]any{
				"http.request.method":       tc.method,
				"http.route":                tc.route,
				"http.response.status_code": int64(tc.status),
				"error.type":                tc.code,
				"url.path":                  strings.SplitN(tc.target, "?", 2)[0],
				"url.scheme":                "http",
				"network.protocol.version":  "1.1",
				"user_agent.original":       "otel-test/1",
				"server.address":            "example.com",
				"server.port":               int64(80),
			})
			var exc bool
			for _, e := range s.Events() {
				exc = exc || e.Name == "exception"
			}
			if exc != tc.exception {
				t.Errorf("exception event %v, want %v", exc, tc.exception)
			}
			if !s.EndTime().After(s.StartTime()) {
				t.Errorf("span ends %v, starts %v", s.EndTime(), s.StartTime())
			}
		})
	}

	pts := r.histogram(t)
	for _, tc := range cases {
		want := map[string]any{
			"http.request.method":       tc.method,
			"url.scheme":                "http",
			"http.response.status_code": int64(tc.status),
			"network.protocol.version":  "1.1",
		}
		if tc.route != nil {
			want["http.route"] = tc.route
		}
		if tc.code != nil {
			want["error.type"] = tc.code
		}
		p := point(t, pts, want)
		if p.Count != 1 {
			t.Errorf("%s: count %d, want 1", tc.name, p.Count)
		}
		if want := []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}; !equalFloats(p.Bounds, want) {
			t.Errorf("bounds %v, want %v", p.Bounds, want)
		}
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A method outside the known set is reported as _OTHER, with the span
// named "HTTP", so clients cannot mint span names or attribute sets.
func TestUnknownMethod(t *testing.T) {
	r := newRig(t)
	r.app.Handle("PURGE", "/cache", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	fxtest.New(t, r.app).Request("PURGE", "/cache").Do().AssertStatus(200)
	checkSpan(t, r.only(t), "HTTP /cache", codes.Unset, map[string]any{
		"http.request.method":          "_OTHER",
		"http.request.method_original": "PURGE",
	})
	point(t, r.histogram(t), map[string]any{
		"http.request.method": "_OTHER", "url.scheme": "http", "http.response.status_code": int64(200),
		"network.protocol.version": "1.1", "http.route": "/cache",
	})
}

// A transport error never reaches middleware: no span, but the histogram
// counts it with its code.
func TestTransportErrorRecordedInMetric(t *testing.T) {
	r := newRig(t, fx.Config{BodyLimit: 16, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	r.app.Post("/x", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	fxtest.New(t, r.app).Post("/x").Body("text/plain", []byte(strings.Repeat("a", 100))).Do().AssertStatus(413)
	if n := len(r.spans.Ended()); n != 0 {
		t.Errorf("%d spans for a transport error, want 0", n)
	}
	pts := r.histogram(t)
	if len(pts) != 1 {
		t.Fatalf("%d data points, want 1", len(pts))
	}
	got := attrs(pts[0].Attributes.ToSlice())
	if got["http.response.status_code"].AsInt64() != 413 || got["error.type"].AsString() != "FX_PAYLOAD_TOO_LARGE" {
		t.Errorf("attributes %v", pts[0].Attributes.Encoded(attribute.DefaultEncoder()))
	}
	if _, ok := got["http.route"]; ok {
		t.Error("http.route set for a transport error")
	}
}

func TestInstrumentRefusesNilApp(t *testing.T) {
	if err := fxotel.Instrument(nil, fxotel.Config{}); err == nil {
		t.Fatal("Instrument(nil) returned nil")
	}
}

// Over a real socket: an incoming traceparent makes the server span the
// remote span's child, a span the handler starts from c.Context() is the
// server span's child, and an outgoing request the handler sends with
// c.Context() carries the trace (injected with the propagator, as
// otelhttp's transport does).
func TestPropagationOverSocket(t *testing.T) {
	r := newRig(t)
	prop := propagation.TraceContext{}

	var downstream http.Header
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		downstream = req.Header.Clone()
	}))
	defer down.Close()

	var handlerCtxErr error
	r.app.Get("/work", func(c *fx.Ctx) error {
		ctx, child := r.tp.Tracer("handler").Start(c.Context(), "db.query")
		child.End()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, down.URL, nil)
		if err != nil {
			return err
		}
		prop.Inject(ctx, propagation.HeaderCarrier(req.Header))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		handlerCtxErr = c.Context().Err()
		return c.JSON(200, "ok")
	})

	addr := fxtest.Serve(t, r.app)

	const remoteTrace, remoteSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/work", nil)
	req.Header.Set("traceparent", "00-"+remoteTrace+"-"+remoteSpan+"-01")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if handlerCtxErr != nil {
		t.Errorf("c.Context() done inside the handler: %v", handlerCtxErr)
	}

	var server, child sdktrace.ReadOnlySpan
	for _, s := range r.spans.Ended() {
		switch s.Name() {
		case "GET /work":
			server = s
		case "db.query":
			child = s
		}
	}
	if server == nil || child == nil {
		t.Fatalf("spans %d; server %v, child %v", len(r.spans.Ended()), server != nil, child != nil)
	}
	if got := server.SpanContext().TraceID().String(); got != remoteTrace {
		t.Errorf("server span trace %s, want the incoming %s", got, remoteTrace)
	}
	if p := server.Parent(); !p.IsRemote() || p.SpanID().String() != remoteSpan {
		t.Errorf("server span parent %s (remote %v), want remote %s", p.SpanID(), p.IsRemote(), remoteSpan)
	}
	if got := child.Parent().SpanID(); got != server.SpanContext().SpanID() {
		t.Errorf("handler span parent %s, want the server span %s", got, server.SpanContext().SpanID())
	}
	if child.SpanContext().TraceID() != server.SpanContext().TraceID() {
		t.Error("handler span in another trace")
	}
	checkSpan(t, server, "GET /work", codes.Unset, map[string]any{
		"client.address": "127.0.0.1",
		"server.address": "127.0.0.1",
		"server.port":    int64(netip.MustParseAddrPort(addr).Port()),
	})

	out := downstream.Get("traceparent")
	want := "00-" + remoteTrace + "-" + child.SpanContext().SpanID().String() + "-01"
	if out != want {
		t.Errorf("outgoing traceparent %q, want %q", out, want)
	}
}

// Without an incoming trace the server span is a root, c.Context()
// carries it, and c.Context() keeps fx's promise: it is done once the App
// begins to shut down.
func TestRootSpanAndShutdownCancellation(t *testing.T) {
	r := newRig(t)
	var inHandler trace.SpanContext
	r.app.Get("/x", func(c *fx.Ctx) error {
		inHandler = trace.SpanContextFromContext(c.Context())
		return c.JSON(200, "ok")
	})
	shut := make(chan error, 1)
	r.app.Get("/wait", func(c *fx.Ctx) error {
		go func() { shut <- r.app.Shutdown() }()
		select {
		case <-c.Context().Done():
			return c.JSON(200, c.Context().Err().Error())
		case <-time.After(5 * time.Second):
			return c.JSON(200, "not cancelled")
		}
	})
	cl := fxtest.New(t, r.app)
	cl.Get("/x").Do().AssertStatus(200)
	s := r.only(t)
	if s.Parent().IsValid() {
		t.Errorf("server span has parent %v, want a root", s.Parent())
	}
	if inHandler.SpanID() != s.SpanContext().SpanID() {
		t.Errorf("c.Context() carries span %s, want the server span %s", inHandler.SpanID(), s.SpanContext().SpanID())
	}
	cl.Get("/wait").Do().AssertJSON(200, `"context canceled"`)
	if err := <-shut; err != nil {
		t.Error(err)
	}
}

type reqValueKey struct{}

// Under the nethttp adapter, c.Context() must still derive from the
// *http.Request's context (so it is done when the client goes away) while
// carrying the server span. Without the transport lookup in the
// middleware the request's values vanish from c.Context().
func TestNetHTTPAdapterKeepsRequestContext(t *testing.T) {
	r := newRig(t)
	var value any
	var inHandler trace.SpanContext
	r.app.Get("/x", func(c *fx.Ctx) error {
		value = c.Context().Value(reqValueKey{})
		inHandler = trace.SpanContextFromContext(c.Context())
		return c.JSON(200, "ok")
	})
	if err := r.app.Boot(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.app.Shutdown() })
	h := nethttp.Handler(r.app)
	req := httptest.NewRequest(http.MethodGet, "http://example.com/x", nil)
	req = req.WithContext(context.WithValue(req.Context(), reqValueKey{}, "from net/http"))
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if value != "from net/http" {
		t.Errorf("c.Context() value %v, want the *http.Request context's", value)
	}
	s := r.only(t)
	if inHandler.SpanID() != s.SpanContext().SpanID() {
		t.Errorf("c.Context() carries span %s, want the server span %s", inHandler.SpanID(), s.SpanContext().SpanID())
	}
	if s.Parent().SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("server span parent %s, want the incoming one", s.Parent().SpanID())
	}
}

// RequestHeaderCarrier carries a trace context into a fasthttp request
// and back out of it.
func TestRequestHeaderCarrier(t *testing.T) {
	prop := propagation.TraceContext{}
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("t").Start(context.Background(), "client")
	defer span.End()
	var req fasthttp.Request
	c := (*fxotel.RequestHeaderCarrier)(&req.Header)
	prop.Inject(ctx, c)
	if got := string(req.Header.Peek("traceparent")); !strings.Contains(got, span.SpanContext().SpanID().String()) {
		t.Fatalf("traceparent %q does not name span %s", got, span.SpanContext().SpanID())
	}
	if !slices.Contains(c.Keys(), "Traceparent") && !slices.Contains(c.Keys(), "traceparent") {
		t.Errorf("Keys %v lacks traceparent", c.Keys())
	}
	back := trace.SpanContextFromContext(prop.Extract(context.Background(), c))
	if back.SpanID() != span.SpanContext().SpanID() || !back.IsRemote() {
		t.Errorf("extracted %v, want the remote span %s", back, span.SpanContext().SpanID())
	}
}

// An unsampled request gets no recorded span, but is still counted, and
// c.Context() still carries the (unsampled) trace onward.
func TestUnsampledStillCountedAndPropagated(t *testing.T) {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(sdktrace.NeverSample()))
	reader := sdkmetric.NewManualReader()
	if err := fxotel.Instrument(app, fxotel.Config{TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))}); err != nil {
		t.Fatal(err)
	}
	var inHandler trace.SpanContext
	app.Get("/x", func(c *fx.Ctx) error {
		inHandler = trace.SpanContextFromContext(c.Context())
		return c.JSON(200, "ok")
	})
	fxtest.New(t, app).Get("/x").Do().AssertStatus(200)
	if n := len(rec.Ended()); n != 0 {
		t.Errorf("%d spans recorded, want 0", n)
	}
	if !inHandler.IsValid() || inHandler.IsSampled() {
		t.Errorf("c.Context() span context %v, want a valid unsampled one", inHandler)
	}
	r := &rig{reader: reader}
	point(t, r.histogram(t), map[string]any{
		"http.request.method": "GET", "url.scheme": "http", "http.response.status_code": int64(200),
		"network.protocol.version": "1.1", "http.route": "/x",
	})
}

// An upgraded request (a WebSocket connection, observed when it ends)
// carries the connection's figures, left as ws_* log attributes, on its
// span.
func TestUpgradedRequestSpanCarriesTheConnection(t *testing.T) {
	r := newRig(t)
	r.app.Get("/ws", func(c *fx.Ctx) error {
		c.RequestCtx().SetStatusCode(101)
		c.AddLogAttrs(slog.Int("ws_close_code", 4403), slog.String("ws_close_reason", "FX_FORBIDDEN"),
			slog.Int64("ws_messages_in", 3), slog.Int64("ws_bytes_out", 5), slog.Bool("ws_closed_by_peer", false),
			slog.String("request_id", "r1"))
		return nil
	})
	if _, err := r.app.Test(httptest.NewRequest("GET", "/ws", nil)); err != nil {
		t.Fatal(err)
	}
	checkSpan(t, r.only(t), "GET /ws", codes.Unset, map[string]any{
		"http.response.status_code": int64(101),
		"websocket.close_code":      int64(4403),
		"websocket.close_reason":    "FX_FORBIDDEN",
		"websocket.messages_in":     int64(3),
		"websocket.bytes_out":       int64(5),
		"websocket.closed_by_peer":  false,
		"request_id":                nil,
		"websocket.request_id":      nil,
	})
}
