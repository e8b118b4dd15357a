package health_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/health"
	"github.com/fxhq/fx/internal/kittest"
)

// healthDetails decodes the details of a failed probe.
type healthDetails struct {
	Checks map[string]health.Result `json:"checks"`
}

func probeDetails(t *testing.T, env fxtest.Envelope) healthDetails {
	t.Helper()
	var d healthDetails
	if err := json.Unmarshal(env.Details, &d); err != nil {
		t.Fatalf("details %s: %v", env.Details, err)
	}
	return d
}

// Probes without checks answer the prebuilt {"status":"ok"}.
func TestHealthNoChecks(t *testing.T) {
	app := quiet()
	health.New().Register(app)
	t.Cleanup(func() { app.Shutdown() })
	for _, path := range []string{"/livez", "/readyz"} {
		r := get(t, app, path)
		if r.Status != 200 || string(r.Body) != `{"status":"ok"}` || r.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s %q", path, r.Status, r.Header().Get("Content-Type"), r.Body)
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
		h := health.New(health.Config{RetryAfter: 5})
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

		r := get(t, app, "/readyz")
		env := r.AssertError(503, fx.ErrorCodes.ServiceUnavailable).Envelope()
		if r.Header().Get("Retry-After") != "5" {
			t.Errorf("dev=%v: Retry-After %q", dev, r.Header().Get("Retry-After"))
		}
		if env.Message != "Readiness check failed: db, queue" {
			t.Errorf("dev=%v: message %q", dev, env.Message)
		}
		d := probeDetails(t, env)
		if d.Checks["cache"].Status != "ok" || d.Checks["db"].Status != "fail" || d.Checks["queue"].Status != "fail" {
			t.Errorf("dev=%v: checks %+v", dev, d.Checks)
		}
		leaked := strings.Contains(string(r.Body), "10.0.0.7")
		if leaked != dev {
			t.Errorf("dev=%v: raw error text in body = %v: %s", dev, leaked, r.Body)
		}
		if d.Checks["queue"].Error != "queue is paused for maintenance" {
			t.Errorf("dev=%v: *Error message not shown: %+v", dev, d.Checks["queue"])
		}

		// Liveness has no checks here: readiness failures do not restart.
		if r := get(t, app, "/livez"); r.Status != 200 {
			t.Errorf("dev=%v: livez %d %s", dev, r.Status, r.Body)
		}

		// Polled again, the failure is not logged again; recovery is.
		get(t, app, "/readyz")
		dbDown.Store(false)
		get(t, app, "/readyz")
		var failing, recovered int
		for _, rec := range logs.records(t) {
			switch {
			case rec["msg"] == "fx: health check failing" && rec["check"] == "db":
				failing++
				if !strings.Contains(fmt.Sprint(rec["error"]), "10.0.0.7") {
					t.Errorf("dev=%v: log lacks the raw error: %v", dev, rec)
				}
			case rec["msg"] == "fx: health check recovered" && rec["check"] == "db":
				recovered++
			}
		}
		if failing != 1 || recovered != 1 {
			t.Errorf("dev=%v: logged failing %d, recovered %d times; want 1, 1:\n%v", dev, failing, recovered, logs.records(t))
		}
	}
}

// All checks passing: 200 with each result.
func TestHealthAllPass(t *testing.T) {
	app := quiet()
	h := health.New()
	h.AddLiveness("loop", func(context.Context) error { return nil })
	h.AddReadiness("db", func(context.Context) error { return nil })
	h.Register(app)
	t.Cleanup(func() { app.Shutdown() })
	for _, tc := range []struct{ path, check string }{{"/livez", "loop"}, {"/readyz", "db"}} {
		r := get(t, app, tc.path)
		var body struct {
			Status string                   `json:"status"`
			Checks map[string]health.Result `json:"checks"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil || r.Status != 200 {
			t.Fatalf("%s: %d %s", tc.path, r.Status, r.Body)
		}
		if body.Status != "ok" || len(body.Checks) != 1 || body.Checks[tc.check].Status != "ok" {
			t.Errorf("%s: %s", tc.path, r.Body)
		}
	}
}

// A check that ignores its context is reported failed at the timeout, and
// is not started again while its first run has not returned: a stuck
// dependency cannot pile up goroutines at the polling rate.
func TestHealthHungCheckTimesOut(t *testing.T) {
	app := quiet()
	h := health.New(health.Config{Timeout: 20 * time.Millisecond})
	release := make(chan struct{})
	var calls atomic.Int32
	h.AddReadiness("stuck", func(context.Context) error {
		calls.Add(1)
		<-release // ignores ctx
		return nil
	})
	h.Register(app)
	t.Cleanup(func() { app.Shutdown() })

	r := get(t, app, "/readyz")
	d := probeDetails(t, r.AssertError(503, fx.ErrorCodes.ServiceUnavailable).Envelope())
	if got := d.Checks["stuck"]; got.Status != "fail" || got.Error != "check timed out after 20ms" || got.DurationMS < 20 {
		t.Errorf("first probe: %+v", got)
	}
	r = get(t, app, "/readyz")
	d = probeDetails(t, r.AssertError(503, fx.ErrorCodes.ServiceUnavailable).Envelope())
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
		h := health.New(health.Config{Concurrency: conc, Timeout: 5 * time.Second})
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
		r := get(t, app, "/readyz")
		if r.Status != 200 {
			t.Errorf("conc=%d: %d %s", conc, r.Status, r.Body)
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
	h := health.New()
	h.AddLiveness("boom", func(context.Context) error { panic("nil map") })
	h.Register(app)
	t.Cleanup(func() { app.Shutdown() })
	r := get(t, app, "/livez")
	d := probeDetails(t, r.AssertError(503, fx.ErrorCodes.ServiceUnavailable).Envelope())
	if d.Checks["boom"].Status != "fail" || d.Checks["boom"].Error != "" {
		t.Errorf("%+v", d.Checks)
	}
}

// Readiness fails as soon as Shutdown begins, while a slow request still
// holds the shutdown open, so load balancers stop routing before the
// connections close; liveness still passes (the process is fine).
func TestReadinessFailsWhenShutdownBegins(t *testing.T) {
	app := quiet()
	h := health.New()
	var checks atomic.Int32
	h.AddReadiness("db", func(context.Context) error { checks.Add(1); return nil })
	h.Register(app)
	entered, release := make(chan struct{}), make(chan struct{})
	app.Get("/slow", func(c *fx.Ctx) error {
		close(entered)
		<-release
		return c.String(200, "done")
	})
	addr := fxtest.Serve(t, app)
	handler := app.Handler()
	probe := func(path string) (int, []byte, http.Header) {
		rc := kittest.RequestCtx("GET", path)
		handler(rc)
		hdr := http.Header{}
		for _, name := range []string{"Content-Type", "Retry-After"} {
			if v := rc.Response.Header.Peek(name); v != nil {
				hdr.Set(name, string(v))
			}
		}
		return rc.Response.StatusCode(), append([]byte(nil), rc.Response.Body()...), hdr
	}
	if st, body, _ := probe("/readyz"); st != 200 {
		t.Fatalf("before shutdown: %d %s", st, body)
	}

	slow := make(chan *http.Response, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/slow")
		if err != nil {
			t.Error(err)
		}
		slow <- resp
	}()
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- app.Shutdown() }()
	<-app.Done()
	before := checks.Load()
	st, body, hdr := probe("/readyz")
	kittest.CheckEnvelope(t, st, hdr, body, fx.ErrorCodes.ServiceUnavailable)
	if !strings.Contains(string(body), `"details":{"checks":{}}`) {
		t.Errorf("during shutdown: details are not the probes' one shape (no results): %s", body)
	}
	if retry := hdr.Get("Retry-After"); st != 503 || retry != "1" {
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
	h := health.New()
	ok := func(context.Context) error { return nil }
	h.AddReadiness("db", ok)
	mustPanic("duplicate", func() { h.AddReadiness("db", ok) })
	mustPanic("nil", func() { h.AddLiveness("x", nil) })
	app := quiet()
	h.Register(app)
	t.Cleanup(func() { app.Shutdown() })
	get(t, app, "/readyz")
	mustPanic("after serving", func() { h.AddReadiness("late", ok) })
}

// BenchmarkLivezNoChecks: /livez without checks, through the App's
// handler (routing, chain, boundary): the prebuilt body, no allocation.
func BenchmarkLivezNoChecks(b *testing.B) {
	app := fx.New(fx.Config{Logger: silentLogger})
	health.New().Register(app)
	kittest.Bench(b, app.Handler(), "GET", "/livez", 200)
}

// The probes declare only the 503 they can answer: /readyz always (it
// answers 503 while the App shuts down), /livez only with a liveness
// check; a liveness check added after Register would be undeclared, so
// it panics.
func TestHealthDeclaresReachable503(t *testing.T) {
	declares503 := func(app *fx.App, path string) bool {
		t.Helper()
		routes, err := app.Routes()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range routes {
			if r.Method == "GET" && r.Path == path {
				for _, d := range r.DeclaredResponses() {
					if d.Status == 503 && d.Code == "FX_SERVICE_UNAVAILABLE" {
						return true
					}
				}
				return false
			}
		}
		t.Fatalf("no route GET %s", path)
		return false
	}
	app := quiet()
	h := health.New()
	h.Register(app)
	if declares503(app, "/livez") || !declares503(app, "/readyz") {
		t.Errorf("without checks: /livez declares 503 %v (want false), /readyz %v (want true)",
			declares503(app, "/livez"), declares503(app, "/readyz"))
	}
	defer func() {
		if recover() == nil {
			t.Error("AddLiveness after Register did not panic")
		}
	}()
	withCheck := quiet()
	h2 := health.New()
	h2.AddLiveness("loop", func(context.Context) error { return nil })
	h2.Register(withCheck)
	if !declares503(withCheck, "/livez") {
		t.Error("/livez with a liveness check does not declare its 503")
	}
	h2.AddLiveness("late", func(context.Context) error { return nil })
}
