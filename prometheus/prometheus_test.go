package fxprom_test

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/middleware"
	fxprom "github.com/fxhq/fx/prometheus"
	"github.com/fxhq/fx/validate"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

var errTeapot = fx.NewError(418, "APP_TEAPOT", "I am a teapot")

// newApp is the App of the tests: a success, a validated route, a panic,
// an error the hook answers with another status, a small BodyLimit for the
// transport 413, and the metrics on reg.
func newApp(reg *prometheus.Registry, cfg fxprom.Config) *fx.App {
	app := fx.New(fx.Config{BodyLimit: 1024, Logger: slog.New(slog.DiscardHandler)})
	app.Get("/hello/:name", func(c *fx.Ctx) error { return c.String(200, "hello") })
	app.Route(fx.Route{
		Method:  "POST",
		Path:    "/items",
		Body:    validate.Object(validate.Fields{"name": validate.String()}),
		Handler: func(c *fx.Ctx) error { return c.String(201, "created") },
	})
	app.Get("/panic", func(c *fx.Ctx) error { panic("boom") })
	app.Get("/teapot", func(c *fx.Ctx) error { return errTeapot })
	app.OnError(func(c *fx.Ctx, err any) bool {
		if e, ok := err.(error); ok && errors.Is(e, errTeapot) {
			c.WriteError(err)
			c.RequestCtx().Response.SetStatusCode(503) // the hook's own status
			return true
		}
		return false
	})
	cfg.Registry = reg
	fxprom.Register(app, cfg)
	return app
}

func do(t *testing.T, client *http.Client, method, url, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// tooLarge sends a head declaring a body over the BodyLimit on a raw
// connection and returns the status line: fasthttp refuses it before the
// handler, as a transport error.
func tooLarge(t *testing.T, base string) string {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = io.WriteString(conn, "POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"+
		strings.Repeat("x", 2048))
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}

// scrape fetches url and parses it with Prometheus' text parser.
func scrape(t *testing.T, client *http.Client, url string, header ...string) map[string]*dto.MetricFamily {
	t.Helper()
	status, body := do(t, client, "GET", url, "", header...)
	if status != 200 {
		t.Fatalf("scrape: status %d: %s", status, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("scrape: %v\n%s", err, body)
	}
	return mfs
}

type labels struct{ method, route, status, code string }

// counts returns the counter's values and the histogram's sample counts
// by label combination.
func counts(t *testing.T, mfs map[string]*dto.MetricFamily) (requests, observed map[labels]uint64) {
	t.Helper()
	key := func(m *dto.Metric) labels {
		var l labels
		for _, lp := range m.GetLabel() {
			switch lp.GetName() {
			case "method":
				l.method = lp.GetValue()
			case "route":
				l.route = lp.GetValue()
			case "status":
				l.status = lp.GetValue()
			case "code":
				l.code = lp.GetValue()
			default:
				t.Errorf("unexpected label %s=%q", lp.GetName(), lp.GetValue())
			}
		}
		return l
	}
	requests, observed = map[labels]uint64{}, map[labels]uint64{}
	if mf := mfs[fxprom.RequestsName]; mf == nil || mf.GetType() != dto.MetricType_COUNTER {
		t.Fatalf("%s missing or not a counter", fxprom.RequestsName)
	}
	if mf := mfs[fxprom.DurationName]; mf == nil || mf.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("%s missing or not a histogram", fxprom.DurationName)
	}
	for _, m := range mfs[fxprom.RequestsName].GetMetric() {
		requests[key(m)] = uint64(m.GetCounter().GetValue())
	}
	for _, m := range mfs[fxprom.DurationName].GetMetric() {
		h := m.GetHistogram()
		observed[key(m)] = h.GetSampleCount()
		if len(h.GetBucket()) != len(fxprom.DefaultBuckets)+1 { // and +Inf
			t.Errorf("%v: %d buckets, want %d", key(m), len(h.GetBucket()), len(fxprom.DefaultBuckets)+1)
		}
	}
	return requests, observed
}

// TestMetricsOverSocket serves the App on a loopback socket, sends a
// success, a 404, a validation failure, a panic, a hook-replaced response,
// an unknown method and a body over the limit (a transport 413), then
// scrapes /metrics and checks every series with Prometheus' text parser.
func TestMetricsOverSocket(t *testing.T) {
	reg := prometheus.NewRegistry()
	base := "http://" + fxtest.Serve(t, newApp(reg, fxprom.Config{}))
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()

	check := func(wantStatus int, method, path, body string) {
		t.Helper()
		if status, got := do(t, client, method, base+path, body); status != wantStatus {
			t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, wantStatus, got)
		}
	}
	check(200, "GET", "/hello/ada", "")
	check(200, "GET", "/hello/bob", "")
	check(404, "GET", "/no/such/path", "")
	check(422, "POST", "/items", `{"name":1}`)
	check(201, "POST", "/items", `{"name":"pen"}`)
	check(500, "GET", "/panic", "")
	check(503, "GET", "/teapot", "")
	check(404, "PURGE", "/cache", "")
	if line := tooLarge(t, base); !strings.HasPrefix(line, "HTTP/1.1 413") {
		t.Fatalf("oversized body: %q, want a 413", line)
	}

	requests, observed := counts(t, scrape(t, client, base+"/metrics"))
	want := map[labels]uint64{
		{"GET", "/hello/:name", "200", ""}:                       2, // the pattern, not /hello/ada
		{"GET", "", "404", fx.ErrorCodes.NotFound}:               1, // not /no/such/path
		{"POST", "/items", "422", fx.ErrorCodes.ValidationError}: 1,
		{"POST", "/items", "201", ""}:                            1,
		{"GET", "/panic", "500", fx.ErrorCodes.InternalError}:    1,
		{"GET", "/teapot", "503", "APP_TEAPOT"}:                  1, // the hook's status, the error's code
		{"_OTHER", "", "404", fx.ErrorCodes.NotFound}:            1, // PURGE
		{"POST", "", "413", fx.ErrorCodes.PayloadTooLarge}:       1, // transport error, route ""
	}
	for l, n := range want {
		if requests[l] != n {
			t.Errorf("requests%v = %d, want %d", l, requests[l], n)
		}
		wantObserved := n
		if l.status == "413" {
			wantObserved = 0 // no measured duration: counted, not observed
		}
		if observed[l] != wantObserved {
			t.Errorf("duration%v count = %d, want %d", l, observed[l], wantObserved)
		}
	}
	for l, n := range requests {
		if _, ok := want[l]; !ok {
			t.Errorf("unexpected series %v = %d", l, n)
		}
		if strings.Contains(l.route, "ada") || strings.Contains(l.route, "no/such") {
			t.Errorf("raw path in a route label: %v", l)
		}
	}

	// The first scrape is counted by the second, under its route.
	requests, observed = counts(t, scrape(t, client, base+"/metrics"))
	if l := (labels{"GET", "/metrics", "200", ""}); requests[l] != 1 || observed[l] != 1 {
		t.Errorf("scrape series %v: %d requests, %d observed, want 1 and 1", l, requests[l], observed[l])
	}
}

// TestMetricsRouteGuarded guards /metrics with Config.Middleware: a scrape
// without the API key gets the 401 envelope (and is itself counted), one
// with it gets the metrics.
func TestMetricsRouteGuarded(t *testing.T) {
	const key = "scrape-key-0123456789abcdef"
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{key: {Subject: "prometheus"}})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	app := newApp(reg, fxprom.Config{
		Path:       "/internal/metrics",
		Middleware: []fx.Middleware{middleware.Auth(middleware.AuthConfig{APIKeys: keys})},
	})
	c := fxtest.New(t, app)
	c.Get("/internal/metrics").Do().AssertError(401, fx.ErrorCodes.Unauthenticated)
	c.Get("/metrics").Do().AssertError(404, fx.ErrorCodes.NotFound)

	base := "http://" + fxtest.Serve(t, app)
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	requests, _ := counts(t, scrape(t, client, base+"/internal/metrics", middleware.DefaultAPIKeyHeader, key))
	if l := (labels{"GET", "/internal/metrics", "401", fx.ErrorCodes.Unauthenticated}); requests[l] != 1 {
		t.Errorf("refused scrape %v counted %d times, want 1", l, requests[l])
	}
}

// TestRegisterConfigErrors: configuration mistakes are Boot errors, with
// the other configuration errors, not panics.
func TestRegisterConfigErrors(t *testing.T) {
	cases := map[string]struct {
		setup func(app *fx.App)
		want  string
	}{
		"buckets not increasing": {func(app *fx.App) {
			fxprom.Register(app, fxprom.Config{Registry: prometheus.NewRegistry(), Buckets: []float64{1, 0.5}})
		}, "Buckets must be strictly increasing"},
		"registered twice": {func(app *fx.App) {
			reg := prometheus.NewRegistry()
			fxprom.Register(app, fxprom.Config{Registry: reg})
			fxprom.Register(app, fxprom.Config{Registry: reg})
		}, "registered twice"},
		"registry not a gatherer": {func(app *fx.App) {
			fxprom.Register(app, fxprom.Config{Registry: registererOnly{prometheus.NewRegistry()}})
		}, "Registry is not a prometheus.Gatherer"},
		"registry holds another metric under the name": {func(app *fx.App) {
			reg := prometheus.NewRegistry()
			reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: fxprom.RequestsName, Help: "other"}))
			fxprom.Register(app, fxprom.Config{Registry: reg})
		}, "the Registry refused the metrics"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
			tc.setup(app)
			err := app.Boot()
			var fe *fx.Error
			if err == nil || !errors.As(err, &fe) || fe.Code != fx.ErrorCodes.InternalError || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Boot: %v; want an FX_INTERNAL_ERROR saying %q", err, tc.want)
			}
		})
	}
}

// TestRegistryShared: two Apps on one registry count into the same series
// instead of failing on the second registration.
func TestRegistryShared(t *testing.T) {
	reg := prometheus.NewRegistry()
	for range 2 {
		app := newApp(reg, fxprom.Config{})
		fxtest.New(t, app).Get("/hello/x").Do().AssertStatus(200)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == fxprom.RequestsName {
			if n := mf.GetMetric()[0].GetCounter().GetValue(); len(mf.GetMetric()) != 1 || n != 2 {
				t.Fatalf("%d series, first %v; want one series counting 2", len(mf.GetMetric()), n)
			}
			return
		}
	}
	t.Fatal("no requests counter")
}

type registererOnly struct{ prometheus.Registerer }

// TestConcurrentFirstSight sends requests of new label combinations from
// several goroutines at once: the copy-on-write map of series must lose
// no count when two requests add combinations at the same time (run with
// -race too).
func TestConcurrentFirstSight(t *testing.T) {
	reg := prometheus.NewRegistry()
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Get("/s/:status", func(c *fx.Ctx) error {
		return c.String(200+len(c.Param("status")), "ok") // 201..208 by the length
	})
	fxprom.Register(app, fxprom.Config{Registry: reg})
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	const workers, perWorker = 8, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				target := "/s/" + strings.Repeat("x", 1+(w+i)%8)
				resp, err := app.Test(httptest.NewRequest("GET", target, nil))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	series := 0
	for _, mf := range mfs {
		if mf.GetName() == fxprom.RequestsName {
			for _, m := range mf.GetMetric() {
				total += m.GetCounter().GetValue()
				series++
			}
		}
	}
	if total != workers*perWorker || series != 8 {
		t.Fatalf("%v requests in %d series, want %d in 8", total, series, workers*perWorker)
	}
}

// TestGatherFailureIsEnvelope: promhttp would answer a gathering failure
// with a plain-text 500; through Handler it is the 500 envelope.
func TestGatherFailureIsEnvelope(t *testing.T) {
	failing := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		return nil, errors.New("collector down")
	})
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	fxprom.Register(app, fxprom.Config{Registry: prometheus.NewRegistry(), Gatherer: failing})
	r := fxtest.New(t, app).Get("/metrics").Do().AssertError(500, fx.ErrorCodes.InternalError)
	if ct := r.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want the envelope's", ct)
	}
}

// upgradedEnd answers as package websocket leaves an upgraded request
// when its connection ends: status 101 and the connection's figures as
// ws_* log attributes (closed by the peer with 1000 and reason, 3
// messages and 30 bytes in, 2 messages and 20 bytes out).
func upgradedEnd(reason string) fx.Handler {
	return func(c *fx.Ctx) error {
		c.RequestCtx().SetStatusCode(101)
		c.AddLogAttrs(slog.Int("ws_close_code", 1000), slog.String("ws_close_reason", reason),
			slog.Bool("ws_closed_by_peer", true),
			slog.Int64("ws_messages_in", 3), slog.Int64("ws_messages_out", 2),
			slog.Int64("ws_bytes_in", 30), slog.Int64("ws_bytes_out", 20))
		return nil
	}
}

// An upgraded request, as package websocket leaves it when its connection
// ends (status 101, the figures as ws_* log attributes), is counted once
// in the request series and adds its figures to the WebSocket counters;
// the example's real connection is in examples/observability
// (TestWebSocketConnectionIsObservedOnce).
func TestWebSocketFiguresCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Get("/ws/:room", upgradedEnd("bye"))
	app.Get("/plain", func(c *fx.Ctx) error {
		c.RequestCtx().SetStatusCode(101) // a 101 without the figures
		return nil
	})
	fxprom.Register(app, fxprom.Config{Registry: reg})
	c := fxtest.New(t, app)
	for _, path := range []string{"/ws/a", "/ws/b", "/plain"} {
		c.Get(path).Do().AssertStatus(101)
	}
	want := `
# HELP websocket_bytes_total WebSocket data message payload bytes, by route pattern and direction (in: from the peer, out: to it).
# TYPE websocket_bytes_total counter
websocket_bytes_total{direction="in",route="/ws/:room"} 60
websocket_bytes_total{direction="out",route="/ws/:room"} 40
# HELP websocket_closes_total Ended WebSocket connections, by route pattern and close code.
# TYPE websocket_closes_total counter
websocket_closes_total{close_code="1000",route="/ws/:room"} 2
# HELP websocket_messages_total WebSocket data messages, by route pattern and direction (in: from the peer, out: to it).
# TYPE websocket_messages_total counter
websocket_messages_total{direction="in",route="/ws/:room"} 6
websocket_messages_total{direction="out",route="/ws/:room"} 4
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		fxprom.WebSocketBytesName, fxprom.WebSocketClosesName, fxprom.WebSocketMessagesName); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, fxprom.RequestsName); n != 2 {
		t.Errorf("%d request series; want 2 (/ws/:room and /plain)", n)
	}
}

// A peer chooses its close code: the application codes it may send
// (3000-4999) are one series, "peer_app", not one each; the codes fx
// sends itself (4000 + status of a handler's error) keep their number.
func TestWebSocketPeerCloseCodesBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Get("/ws", func(c *fx.Ctx) error {
		code, _ := strconv.Atoi(c.Query("code"))
		c.RequestCtx().SetStatusCode(101)
		c.AddLogAttrs(slog.Int("ws_close_code", code), slog.Bool("ws_closed_by_peer", c.Query("peer") == "1"))
		return nil
	})
	fxprom.Register(app, fxprom.Config{Registry: reg})
	c := fxtest.New(t, app)
	for _, q := range []string{"code=3001&peer=1", "code=4999&peer=1", "code=4410&peer=1", "code=1001&peer=1", "code=4410&peer=0"} {
		c.Get("/ws?" + q).Do().AssertStatus(101)
	}
	want := `
# HELP websocket_closes_total Ended WebSocket connections, by route pattern and close code.
# TYPE websocket_closes_total counter
websocket_closes_total{close_code="1001",route="/ws"} 1
websocket_closes_total{close_code="4410",route="/ws"} 1
websocket_closes_total{close_code="peer_app",route="/ws"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), fxprom.WebSocketClosesName); err != nil {
		t.Error(err)
	}
}
