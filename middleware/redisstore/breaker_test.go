//go:build unix

package redisstore_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/redistest"
	"github.com/fxhq/fx/middleware/ratelimit"
	"github.com/fxhq/fx/middleware/redisstore"
	"github.com/redis/go-redis/v9"
)

// stateLog records the "state" attribute of every log record.
type stateLog struct {
	mu     sync.Mutex
	states []string
}

func (l *stateLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *stateLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *stateLog) WithGroup(string) slog.Handler            { return l }
func (l *stateLog) Handle(_ context.Context, r slog.Record) error {
	state := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "state" {
			state = a.Value.String()
		}
		return true
	})
	l.mu.Lock()
	l.states = append(l.states, state)
	l.mu.Unlock()
	return nil
}

// count is how many records had state s.
func (l *stateLog) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, st := range l.states {
		if st == s {
			n++
		}
	}
	return n
}

// storeApp is an app with a rate limit (fail closed) on a store over a
// client with go-redis's default options, logging to log.
func storeApp(t *testing.T, opt *redis.Options, log *stateLog) *fx.App {
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Use(ratelimit.New(ratelimit.Config{
		Limit: ratelimit.Limit{Requests: 1000, Period: time.Minute},
		Store: redisstore.NewRateLimitStore(c, redisstore.RateLimitStoreConfig{Logger: slog.New(log)}),
		Key:   func(c *fx.Ctx) (string, error) { return c.Header("X-Client"), nil },
	}))
	app.Get("/r", func(c *fx.Ctx) error { return c.String(200, "ok") })
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	return app
}

// expectFastRefusals sends n requests through send while Redis does not
// answer: each must be refused (send reports whether its answer is the
// refusal the test expects, and the answer itself for the failure
// message); each of the first DefaultFailureThreshold within 250 ms
// (each waits at most the store's Timeout, 100 ms), and once the circuit
// is open each within open (no Redis wait at all). It returns the first
// refusal's duration.
func expectFastRefusals(t *testing.T, n int, open time.Duration, send func(i int) (refused bool, answer any)) time.Duration {
	t.Helper()
	var first time.Duration
	for i := range n {
		began := time.Now()
		refused, answer := send(i)
		took := time.Since(began)
		if !refused {
			t.Fatalf("request %d with Redis not answering: %+v", i+1, answer)
		}
		limit := open
		if i < redisstore.DefaultFailureThreshold {
			limit = 250 * time.Millisecond
		}
		if i == 0 {
			first = took
		}
		if took > limit {
			t.Fatalf("refusal %d took %v, want < %v", i+1, took, limit)
		}
	}
	return first
}

// awaitRecovery calls allowed every poll until it reports a request
// served again, and returns how long that took (failing after 5 s).
func awaitRecovery(t *testing.T, poll time.Duration, allowed func(i int) bool) time.Duration {
	t.Helper()
	start := time.Now()
	for i := 0; time.Since(start) < 5*time.Second; i++ {
		if allowed(i) {
			return time.Since(start)
		}
		time.Sleep(poll)
	}
	t.Fatal("no request allowed within 5 s of Redis answering again")
	return 0
}

// limitRefusals is expectFastRefusals for the rate limit: 40 requests,
// each 503 FX_SERVICE_UNAVAILABLE with reason unavailable, under 5 ms
// each once the circuit is open.
func limitRefusals(t *testing.T, app *fx.App) time.Duration {
	t.Helper()
	return expectFastRefusals(t, 40, 5*time.Millisecond, func(int) (bool, any) {
		r := serve(app, "c")
		return r.status == 503 && r.code == fx.ErrorCodes.ServiceUnavailable && r.reason == ratelimit.ReasonUnavailable, r
	})
}

// limitRecovery is awaitRecovery for the rate limit: a request every 5 ms
// until one is allowed (200).
func limitRecovery(t *testing.T, app *fx.App) time.Duration {
	t.Helper()
	return awaitRecovery(t, 5*time.Millisecond, func(int) bool { return serve(app, "c").status == 200 })
}

// TestRedisDownFailsFast kills Redis under an app whose client has
// go-redis's default options (3 retries with backoff): the first 503
// comes within 250 ms, the later ones in under 5 ms each, the circuit's
// opening is logged exactly once however many requests are refused, and
// after Redis restarts on the same port requests are allowed again
// within about one ProbeInterval, the closing logged once.
func TestRedisDownFailsFast(t *testing.T) {
	srv := redistest.Start(t)
	log := &stateLog{}
	app := storeApp(t, &redis.Options{Addr: srv.Addr}, log)
	if r := serve(app, "c"); r.status != 200 {
		t.Fatalf("Redis up: %d %s", r.status, r.body)
	}
	srv.Stop()
	first := limitRefusals(t, app)
	if n := log.count("open"); n != 1 {
		t.Fatalf(`%d "open" log lines after 40 refusals, want 1 (%q)`, n, log.states)
	}

	srv.Restart()
	recovery := limitRecovery(t, app)
	if recovery > 2*time.Second {
		t.Fatalf("recovery took %v, want < 2s (ProbeInterval %v)", recovery, redisstore.DefaultProbeInterval)
	}
	if o, c := log.count("open"), log.count("closed"); o != 1 || c != 1 {
		t.Fatalf("log states %q, want one open and one closed", log.states)
	}
	t.Logf("Redis killed: first 503 after %v; Redis restarted: first 200 after %v", first, recovery)
}

// TestRedisHungFailsFast stops Redis (SIGSTOP: connections stay open,
// nothing answers), with a client that does not pass context deadlines to
// its sockets (go-redis's default, ReadTimeout 3 s) and with one that
// does: either way the first 503 comes within 250 ms and later ones at
// once; after SIGCONT requests are allowed again.
func TestRedisHungFailsFast(t *testing.T) {
	for _, ctxTimeout := range []bool{false, true} {
		srv := redistest.Start(t)
		log := &stateLog{}
		app := storeApp(t, &redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeout}, log)
		if r := serve(app, "c"); r.status != 200 {
			t.Fatalf("Redis up: %d %s", r.status, r.body)
		}
		srv.Pause()
		first := limitRefusals(t, app)
		srv.Resume()
		recovery := limitRecovery(t, app)
		if o, c := log.count("open"), log.count("closed"); o != 1 || c != 1 {
			t.Fatalf("log states %q, want one open and one closed", log.states)
		}
		t.Logf("ContextTimeoutEnabled %v: Redis stopped: first 503 after %v; continued: first 200 after %v", ctxTimeout, first, recovery)
		srv.Stop()
	}
}

// TestRedisBackServesTheProbingRequest: once Redis answers again, the
// first request after ProbeInterval is itself the probe (the circuit is
// half-open) and is served, 200, closing the circuit; the requests before
// it are refused at once. Before, that request started a probe in the
// background and was refused 503 without waiting for it: the first
// request after the recovery was always refused.
func TestRedisBackServesTheProbingRequest(t *testing.T) {
	srv := redistest.Start(t)
	log := &stateLog{}
	app := storeApp(t, &redis.Options{Addr: srv.Addr}, log)
	if r := serve(app, "c"); r.status != 200 {
		t.Fatalf("Redis up: %d %s", r.status, r.body)
	}
	srv.Stop()
	limitRefusals(t, app)
	srv.Restart()
	time.Sleep(redisstore.DefaultProbeInterval + 50*time.Millisecond) // a probe is due
	if r := serve(app, "c"); r.status != 200 {
		t.Fatalf("the first request after Redis came back: %d %s %s, want 200 (it is the probe)", r.status, r.code, r.body)
	}
	if o, c := log.count("open"), log.count("closed"); o != 1 || c != 1 {
		t.Fatalf("log states %q, want one open and one closed", log.states)
	}
	if r := serve(app, "c"); r.status != 200 {
		t.Fatalf("the next request: %d %s", r.status, r.body)
	}
}
