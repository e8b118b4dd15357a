package fx_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
)

// healthDetails decodes the details of a failed probe.
type healthDetails struct {
	Checks map[string]fx.HealthResult `json:"checks"`
}

func probeDetails(t *testing.T, env envelope) healthDetails {
	t.Helper()
	var d healthDetails
	if err := json.Unmarshal(env.Error.Details, &d); err != nil {
		t.Fatalf("details %s: %v", env.Error.Details, err)
	}
	return d
}

// Probes without checks answer the prebuilt {"status":"ok"}.
func TestHealthNoChecks(t *testing.T) {
	app := quiet()
	fx.NewHealth().Register(app)
	t.Cleanup(func() { app.Shutdown() })
	for _, path := range []string{"/livez", "/readyz"} {
		r := do(t, app, "GET", path, "")
		if r.status != 200 || string(r.body) != `{"status":"ok"}` || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s %q", path, r.status, r.header.Get("Content-Type"), r.body)
		}
	}
}

// Readiness: every check's result is reported; a failing one gives the 503
// envelope with Retry-After. A plain error's text is operator-facing: not
// shown in production, shown in Development; an *Error's message is shown
// (the check opted in). Liveness does not run readiness checks.
func TestHealthReadinessResults(t *testing.T) {
	for _, dev := range []bool{false, true} {
		app, logs := newLogged(fx.Config{Development: dev})
		h := fx.NewHealth(fx.HealthConfig{RetryAfter: 5})
		var dbDown atomic.Bool
		dbDown.Store(true)
		h.AddReadiness("cache", func(context.Context) error { return nil })
		h.AddReadiness("db", func(context.Context) error {
			if dbDown.Load() {
				return errors.New("dial tcp 10.0.0.7:5432: connection refused")
			}
			return nil
		})
		h.AddReadiness("queue", func(context.Context) error {
			return fx.NewError(503, "APP_QUEUE", "queue is paused for maintenance")
		})
		h.Register(app)
		t.Cleanup(func() { app.Shutdown() })

		r := do(t, app, "GET", "/readyz", "")
		env := mustEnvelope(t, r, 503, fx.CodeServiceUnavailable)
		if r.header.Get("Retry-After") != "5" {
			t.Errorf("dev=%v: Retry-After %q", dev, r.header.Get("Retry-After"))
		}
		if env.Error.Message != "Readiness check failed: db, queue" {
			t.Errorf("dev=%v: message %q", dev, env.Error.Message)
		}
		d := probeDetails(t, env)
		if d.Checks["cache"].Status != "ok" || d.Checks["db"].Status != "fail" || d.Checks["queue"].Status != "fail" {
			t.Errorf("dev=%v: checks %+v", dev, d.Checks)
		}
		leaked := strings.Contains(string(r.body), "10.0.0.7")
		if leaked != dev {
			t.Errorf("dev=%v: raw error text in body = %v: %s", dev, leaked, r.body)
		}
		if d.Checks["queue"].Error != "queue is paused for maintenance" {
			t.Errorf("dev=%v: *Error message not shown: %+v", dev, d.Checks["queue"])
		}

		// Liveness has no checks here: readiness failures do not restart.
		if r := do(t, app, "GET", "/livez", ""); r.status != 200 {
			t.Errorf("dev=%v: livez %d %s", dev, r.status, r.body)
		}

		// Polled again, the failure is not logged again; recovery is.
		do(t, app, "GET", "/readyz", "")
		dbDown.Store(false)
		do(t, app, "GET", "/readyz", "")
		var failing, recovered int
		for _, rec := range logs.records(t) {
			switch {
			case rec["msg"] == "fx: health check failing" && rec["check"] == "db":
				failing++
				if !strings.Contains(rec["error"].(string), "10.0.0.7") {
					t.Errorf("dev=%v: log lacks the raw error: %v", dev, rec)
				}
			case rec["msg"] == "fx: health check recovered" && rec["check"] == "db":
				recovered++
			}
		}
		if failing != 1 || recovered != 1 {
			t.Errorf("dev=%v: logged failing %d, recovered %d times; want 1, 1:\n%s", dev, failing, recovered, logs)
		}
	}
}

// All checks passing: 200 with each result.
func TestHealthAllPass(t *testing.T) {
	app := quiet()
	h := fx.NewHealth()
	h.AddLiveness("loop", func(context.Context) error { return nil })
	h.AddReadiness("db", func(context.Context) error { return nil })
	h.Register(app)
	t.Cleanup(func() { app.Shutdown() })
	for _, tc := range []struct{ path, check string }{{"/livez", "loop"}, {"/readyz", "db"}} {
		r := do(t, app, "GET", tc.path, "")
		var body struct {
			Status string                     `json:"status"`
			Checks map[string]fx.HealthResult `json:"checks"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil || r.status != 200 {
			t.Fatalf("%s: %d %s", tc.path, r.status, r.body)
		}
		if body.Status != "ok" || len(body.Checks) != 1 || body.Checks[tc.check].Status != "ok" {
			t.Errorf("%s: %s", tc.path, r.body)
		}
	}
}

// A check that ignores its context is reported failed at the timeout, and
// is not started again while its first run has not returned: a stuck
// dependency cannot pile up goroutines at the polling rate.
func TestHealthHungCheckTimesOut(t *testing.T) {
	app := quiet()
	h := fx.NewHealth(fx.HealthConfig{Timeout: 20 * time.Millisecond})
	release := make(chan struct{})
	var calls atomic.Int32
	h.AddReadiness("stuck", func(context.Context) error {
		calls.Add(1)
		<-release // ignores ctx
		return nil
	})
	h.Register(app)
	t.Cleanup(func() { app.Shutdown() })

	r := do(t, app, "GET", "/readyz", "")
	d := probeDetails(t, mustEnvelope(t, r, 503, fx.CodeServiceUnavailable))
	if got := d.Checks["stuck"]; got.Status != "fail" || got.Error != "check timed out after 20ms" || got.DurationMS < 20 {
		t.Errorf("first probe: %+v", got)
	}
	r = do(t, app, "GET", "/readyz", "")
	d = probeDetails(t, mustEnvelope(t, r, 503, fx.CodeServiceUnavailable))
	if got := d.Checks["stuck"]; got.Error != "previous run has not returned" {
		t.Errorf("second probe: %+v", got)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("check started %d times while stuck, want 1", n)
	}
	close(release)
}

// Checks run concurrently (three checks that each wait for the other two
// pass only if they run at once), and never more than Concurrency at once.
func TestHealthChecksConcurrentAndBounded(t *testing.T) {
	for _, conc := range []int{1, 3} {
		app := quiet()
		h := fx.NewHealth(fx.HealthConfig{Concurrency: conc, Timeout: 5 * time.Second})
		var running, peak atomic.Int32
		var all sync.WaitGroup
		all.Add(3)
		for _, name := range []string{"a", "b", "c"} {
			h.AddReadiness(name, func(ctx context.Context) error {
				n := running.Add(1)
				defer running.Add(-1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				if conc == 1 {
					return nil
				}
				all.Done()
				done := make(chan struct{})
				go func() { all.Wait(); close(done) }()
				select {
				case <-done:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
		}
		h.Register(app)
		r := do(t, app, "GET", "/readyz", "")
		if r.status != 200 {
			t.Errorf("conc=%d: %d %s", conc, r.status, r.body)
		}
		if p := peak.Load(); p != int32(conc) {
			t.Errorf("conc=%d: peak %d checks at once", conc, p)
		}
		app.Shutdown()
	}
}

// A panicking check is a failure, not a crash.
func TestHealthPanickingCheck(t *testing.T) {
	app := quiet()
	h := fx.NewHealth()
	h.AddLiveness("boom", func(context.Context) error { panic("nil map") })
	h.Register(app)
	t.Cleanup(func() { app.Shutdown() })
	r := do(t, app, "GET", "/livez", "")
	d := probeDetails(t, mustEnvelope(t, r, 503, fx.CodeServiceUnavailable))
	if d.Checks["boom"].Status != "fail" || d.Checks["boom"].Error != "" {
		t.Errorf("%+v", d.Checks)
	}
}

// Readiness fails as soon as Shutdown begins, while a slow request still
// holds the shutdown open, so load balancers stop routing before the
// connections close; liveness still passes (the process is fine).
func TestReadinessFailsWhenShutdownBegins(t *testing.T) {
	app := quiet()
	h := fx.NewHealth()
	var checks atomic.Int32
	h.AddReadiness("db", func(context.Context) error { checks.Add(1); return nil })
	h.Register(app)
	entered, release := make(chan struct{}), make(chan struct{})
	app.Get("/slow", func(c *fx.Ctx) error {
		close(entered)
		<-release
		return c.String(200, "done")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- app.Serve(ln) }()
	handler := app.Handler()
	probe := func(path string) (int, []byte, string) {
		rc := newRequestCtx()
		rc.Request.Header.SetMethod("GET")
		rc.Request.SetRequestURI(path)
		handler(rc)
		return rc.Response.StatusCode(), append([]byte(nil), rc.Response.Body()...), string(rc.Response.Header.Peek("Retry-After"))
	}
	if st, body, _ := probe("/readyz"); st != 200 {
		t.Fatalf("before shutdown: %d %s", st, body)
	}

	slow := make(chan *http.Response, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/slow")
		if err != nil {
			t.Error(err)
		}
		slow <- resp
	}()
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- app.Shutdown() }()
	for !app.ShuttingDown() {
		time.Sleep(time.Millisecond)
	}
	before := checks.Load()
	st, body, retry := probe("/readyz")
	checkEnvelopeBody(t, body, fx.CodeServiceUnavailable)
	if st != 503 || retry != "1" {
		t.Errorf("during shutdown: /readyz %d, Retry-After %q, %s", st, retry, body)
	}
	if checks.Load() != before {
		t.Error("readiness checks ran during shutdown")
	}
	if st, body, _ := probe("/livez"); st != 200 {
		t.Errorf("during shutdown: /livez %d %s", st, body)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) while a request was in flight", err)
	default:
	}

	close(release)
	if resp := <-slow; resp != nil {
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("slow request: %d", resp.StatusCode)
		}
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// Adding a check after the probe has served panics (the lists are read
// without locks), and so do a nil check and a duplicate name.
func TestHealthAddMisuse(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	h := fx.NewHealth()
	ok := func(context.Context) error { return nil }
	h.AddReadiness("db", ok)
	mustPanic("duplicate", func() { h.AddReadiness("db", ok) })
	mustPanic("nil", func() { h.AddLiveness("x", nil) })
	app := quiet()
	h.Register(app)
	t.Cleanup(func() { app.Shutdown() })
	do(t, app, "GET", "/readyz", "")
	mustPanic("after serving", func() { h.AddReadiness("late", ok) })
}

// BenchmarkLivezNoChecks: /livez without checks, through the App's
// handler (routing, chain, boundary): the prebuilt body, no allocation.
func BenchmarkLivezNoChecks(b *testing.B) {
	app := fx.New(fx.Config{Logger: silentLogger})
	fx.NewHealth().Register(app)
	runBenchWith(b, app.Handler(), "GET", "/livez", 200)
}
