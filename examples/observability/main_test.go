package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// observedApp is the example's App, built by newApp as main builds it,
// with what its observers write kept for the test: the JSON log lines,
// the ended spans and the Prometheus registry.
type observedApp struct {
	*fx.App
	logs  *logBuffer
	spans *tracetest.SpanRecorder
	reg   *prometheus.Registry
}

// logBuffer keeps what the App's JSON log handler writes: the server's
// goroutines write while the test reads.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newObservedApp(t *testing.T) observedApp {
	t.Helper()
	o := observedApp{logs: &logBuffer{}, spans: tracetest.NewSpanRecorder(), reg: prometheus.NewRegistry()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(o.spans))
	app, err := newApp(slog.New(slog.NewJSONHandler(o.logs, nil)), tp, o.reg)
	if err != nil {
		t.Fatal(err)
	}
	o.App = app
	return o
}

// One request through the whole wiring: the request ID is kept and echoed,
// the access log and the boundary's 5xx line carry it, the span has the
// caller's trace as parent and the route as name, and /metrics counts the
// request by route and code.
func TestObservabilityWiring(t *testing.T) {
	o := newObservedApp(t)
	c := fxtest.New(t, o.App)

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
	out := o.logs.String()
	for _, want := range []string{`"request_id":"req-abc-1"`, `"route":"/users/:id"`, `"APP_USER_NOT_FOUND"`, `"request_id":"req-abc-2"`} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %s:\n%s", want, out)
		}
	}
	if n := strings.Count(out, `"request_id":"req-abc-2"`); n < 2 {
		t.Errorf("the panic's request ID is on %d log lines, want the access line and the boundary's 5xx line:\n%s", n, out)
	}

	// The span continues the caller's trace and is named by the route.
	got := o.spans.Ended()
	if len(got) != 2 {
		t.Fatalf("%d spans, want 2", len(got))
	}
	if s := got[0]; s.Name() != "GET /users/:id" || s.SpanContext().TraceID().String() != trace || s.Parent().SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("span %q trace %s parent %s; want GET /users/:id in trace %s under 00f067aa0ba902b7",
			s.Name(), s.SpanContext().TraceID(), s.Parent().SpanID(), trace)
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

// A real WebSocket connection, over loopback with a real client, is
// observed by the App's existing observers once, when it ends: one
// access-log line, one finished span and one Prometheus count and
// duration, each with the upgrade's 101, the connection's duration, its
// messages and bytes each way and its close code and reason (in
// Prometheus: the reason as the request series' code label, the messages,
// bytes and close code in the WebSocket counters).
func TestWebSocketConnectionIsObservedOnce(t *testing.T) {
	o := newObservedApp(t)
	logs, spans, reg := o.logs, o.spans, o.reg
	addr := fxtest.Serve(t, o.App)

	conn, resp, err := websocket.DefaultDialer.Dial("ws://"+addr+"/echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if resp.StatusCode != 101 {
		t.Fatalf("upgrade status %d; want 101", resp.StatusCode)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	sent := []string{"one", "two!", "three"} // 12 bytes each way
	for _, m := range sent {
		if err := conn.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
			t.Fatal(err)
		}
		if _, p, err := conn.ReadMessage(); err != nil || string(p) != m {
			t.Fatalf("echo %q, %v; want %q", p, err, m)
		}
	}
	const pause = 30 * time.Millisecond // a floor for the connection's duration
	time.Sleep(pause)
	if err := conn.WriteMessage(websocket.TextMessage, []byte("bye")); err != nil {
		t.Fatal(err)
	}
	_, _, err = conn.ReadMessage()
	if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != 4410 || ce.Text != "APP_BYE" {
		t.Fatalf("read after bye: %v; want close 4410 APP_BYE", err)
	}
	// The server observes the connection after its closing handshake
	// (answered by the client library above) and the socket's close.
	for deadline := time.Now().Add(5 * time.Second); len(spans.Ended()) == 0 || !strings.Contains(logs.String(), `"route":"/echo"`); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no span or access-log line for the connection within 5s")
		}
	}
	time.Sleep(50 * time.Millisecond) // a second observation would show now

	const (
		msgsIn, msgsOut   = 4, 3   // the three echoed and "bye"
		bytesIn, bytesOut = 15, 12 // "one" "two!" "three" "bye"; the echoes
	)

	// Access log: exactly one line for the connection.
	var lines []map[string]any
	for _, text := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(text), &rec); err != nil {
			t.Fatalf("log line %q: %v", text, err)
		}
		if rec["route"] == "/echo" {
			lines = append(lines, rec)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%d access-log lines for /echo; want 1:\n%s", len(lines), logs.String())
	}
	line := lines[0]
	for k, want := range map[string]any{
		"status": 101.0, "code": "APP_BYE",
		"ws_close_code": 4410.0, "ws_close_reason": "APP_BYE", "ws_closed_by_peer": false,
		"ws_messages_in": float64(msgsIn), "ws_messages_out": float64(msgsOut),
		"ws_bytes_in": float64(bytesIn), "ws_bytes_out": float64(bytesOut),
	} {
		if line[k] != want {
			t.Errorf("access log %s = %v; want %v (line %v)", k, line[k], want, line)
		}
	}
	if d, _ := line["duration"].(float64); time.Duration(d) < pause {
		t.Errorf("access log duration %v; want at least %v", time.Duration(d), pause)
	}

	// OpenTelemetry: exactly one finished span, with the same figures.
	ended := spans.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans ended; want 1", len(ended))
	}
	s := ended[0]
	if s.Name() != "GET /echo" {
		t.Errorf("span %q; want GET /echo", s.Name())
	}
	if d := s.EndTime().Sub(s.StartTime()); d < pause {
		t.Errorf("span lasted %v; want at least %v", d, pause)
	}
	attrs := map[attribute.Key]attribute.Value{}
	for _, a := range s.Attributes() {
		attrs[a.Key] = a.Value
	}
	for k, want := range map[attribute.Key]attribute.Value{
		"http.response.status_code": attribute.Int64Value(101),
		"websocket.close_code":      attribute.Int64Value(4410),
		"websocket.close_reason":    attribute.StringValue("APP_BYE"),
		"websocket.closed_by_peer":  attribute.BoolValue(false),
		"websocket.messages_in":     attribute.Int64Value(msgsIn),
		"websocket.messages_out":    attribute.Int64Value(msgsOut),
		"websocket.bytes_in":        attribute.Int64Value(bytesIn),
		"websocket.bytes_out":       attribute.Int64Value(bytesOut),
	} {
		if got, ok := attrs[k]; !ok || got != want {
			t.Errorf("span attribute %s = %v; want %v", k, got.String(), want.String())
		}
	}

	// Prometheus: exactly one series for the connection, counted once,
	// its duration observed once.
	want := `
# HELP http_server_requests_total HTTP responses sent, by method, route pattern, status and error code.
# TYPE http_server_requests_total counter
http_server_requests_total{code="APP_BYE",method="GET",route="/echo",status="101"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "http_server_requests_total"); err != nil {
		t.Error(err)
	}
	// Its messages and bytes each way and its close code, by route.
	wantWS := fmt.Sprintf(`
# HELP websocket_bytes_total WebSocket data message payload bytes, by route pattern and direction (in: from the peer, out: to it).
# TYPE websocket_bytes_total counter
websocket_bytes_total{direction="in",route="/echo"} %d
websocket_bytes_total{direction="out",route="/echo"} %d
# HELP websocket_closes_total Ended WebSocket connections, by route pattern and close code.
# TYPE websocket_closes_total counter
websocket_closes_total{close_code="4410",route="/echo"} 1
# HELP websocket_messages_total WebSocket data messages, by route pattern and direction (in: from the peer, out: to it).
# TYPE websocket_messages_total counter
websocket_messages_total{direction="in",route="/echo"} %d
websocket_messages_total{direction="out",route="/echo"} %d
`, bytesIn, bytesOut, msgsIn, msgsOut)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(wantWS),
		"websocket_bytes_total", "websocket_closes_total", "websocket_messages_total"); err != nil {
		t.Error(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	observed := 0
	for _, f := range families {
		if f.GetName() != "http_server_request_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			h := m.GetHistogram()
			observed += int(h.GetSampleCount())
			if h.GetSampleCount() == 1 && h.GetSampleSum() < pause.Seconds() {
				t.Errorf("observed duration %vs; want at least %v", h.GetSampleSum(), pause)
			}
		}
	}
	if observed != 1 {
		t.Errorf("%d duration observations; want 1", observed)
	}
}
