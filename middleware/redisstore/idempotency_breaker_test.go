package redisstore_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/redistest"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/fxhq/fx/middleware/redisstore"
	"github.com/redis/go-redis/v9"
)

// defaultOptionsApp is one app instance on Redis at addr through a client
// with go-redis's default options (no ContextTimeoutEnabled, 3 retries,
// 5 s dial timeout), the store's breaker logging to log.
func defaultOptionsApp(t *testing.T, addr string, runs *atomic.Int64, log *stateLog) *fx.App {
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { c.Close() })
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Use(idempotency.New(idempotency.Config{ShareAnonymous: true,
		Store: redisstore.NewIdempotencyStore(c, redisstore.IdempotencyStoreConfig{Logger: slog.New(log)})}))
	app.Post("/orders", func(c *fx.Ctx) error { return c.JSON(201, map[string]int64{"run": runs.Add(1)}) })
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	return app
}

// expectFastIdempotencyRefusals sends 20 keyed requests while Redis does
// not answer: each is 503 FX_SERVICE_UNAVAILABLE, the first within 250 ms
// (one call's 100 ms deadline), and once the circuit is open (after
// DefaultFailureThreshold failures) each within 20 ms (no wait for Redis;
// the bound allows for a loaded machine). The handler never runs.
func expectFastIdempotencyRefusals(t *testing.T, app *fx.App, runs *atomic.Int64) time.Duration {
	t.Helper()
	before := runs.Load()
	var first time.Duration
	for i := range 20 {
		began := time.Now()
		r := post(app, "down-"+itoa(i), "{}")
		took := time.Since(began)
		if r.status != 503 || r.code != fx.CodeServiceUnavailable {
			t.Fatalf("request %d with Redis not answering: %+v", i+1, r)
		}
		switch {
		case i == 0:
			first = took
			fallthrough
		case i < redisstore.DefaultFailureThreshold:
			if took > 250*time.Millisecond {
				t.Fatalf("refusal %d took %v, want < 250ms", i+1, took)
			}
		case took > 20*time.Millisecond:
			t.Fatalf("refusal %d (circuit open) took %v, want < 20ms", i+1, took)
		}
	}
	if runs.Load() != before {
		t.Fatalf("the handler ran %d times without idempotency", runs.Load()-before)
	}
	return first
}

// The Redis idempotency store has the rate-limit store's deadline and
// breaker: with Redis killed, and with Redis stopped (SIGSTOP), through a
// client on go-redis's default options, a keyed request is refused within
// 100 ms (not the client's seconds of retries and dial timeout), later ones
// at once; the breaker opens once and closes once Redis answers again.
func TestIdempotencyRedisDownFailsFast(t *testing.T) {
	t.Run("killed", func(t *testing.T) {
		srv := redistest.Start(t)
		var runs atomic.Int64
		log := &stateLog{}
		app := defaultOptionsApp(t, srv.Addr, &runs, log)
		if r := post(app, "up", "{}"); r.status != 201 {
			t.Fatalf("Redis up: %+v", r)
		}
		srv.Stop()
		first := expectFastIdempotencyRefusals(t, app, &runs)
		if n := log.count("open"); n != 1 {
			t.Fatalf(`%d "open" log lines, want 1 (%q)`, n, log.states)
		}
		srv.Restart()
		awaitIdempotencyRecovery(t, app)
		t.Logf("Redis killed: first 503 after %v", first)
	})
	t.Run("stopped", func(t *testing.T) {
		srv := redistest.Start(t)
		var runs atomic.Int64
		log := &stateLog{}
		app := defaultOptionsApp(t, srv.Addr, &runs, log)
		if r := post(app, "up", "{}"); r.status != 201 {
			t.Fatalf("Redis up: %+v", r)
		}
		srv.Pause()
		first := expectFastIdempotencyRefusals(t, app, &runs)
		srv.Resume()
		awaitIdempotencyRecovery(t, app)
		if o, c := log.count("open"), log.count("closed"); o != 1 || c != 1 {
			t.Fatalf("log states %q, want one open and one closed", log.states)
		}
		t.Logf("Redis stopped: first 503 after %v", first)
	})
}

// awaitIdempotencyRecovery sends a fresh key every 10 ms until one runs
// (201), failing after 5 s.
func awaitIdempotencyRecovery(t *testing.T, app *fx.App) {
	t.Helper()
	for i := 0; ; i++ {
		if r := post(app, "recovered-"+itoa(i), "{}"); r.status == 201 {
			return
		}
		if i == 500 {
			t.Fatal("no keyed request ran within 5 s of Redis answering again")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A claim sent while Redis is paused (SIGSTOP) reaches it after the
// request gave up with 503; when Redis resumes it runs the claim, which
// must not take the key: Redis never writes it (a keyspace notification
// would say so), and the retry runs the handler at once instead of getting
// 409 for the whole LockTimeout. Both with a client that passes context
// deadlines to its sockets and with go-redis's default options.
func TestIdempotencyGhostClaim(t *testing.T) {
	for _, ctxTimeout := range []bool{true, false} {
		srv := redistest.Start(t)
		watch := redis.NewClient(&redis.Options{Addr: srv.Addr})
		t.Cleanup(func() { watch.Close() })
		ctx := context.Background()
		if err := watch.ConfigSet(ctx, "notify-keyspace-events", "KA").Err(); err != nil {
			t.Fatal(err)
		}
		sub := watch.PSubscribe(ctx, "__keyspace@0__:"+redisstore.DefaultIdempotencyPrefix+"*ghost*")
		if _, err := sub.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		events := sub.Channel()

		c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeout, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		var runs atomic.Int64
		app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
		app.Use(idempotency.New(idempotency.Config{ShareAnonymous: true,
			Store: redisstore.NewIdempotencyStore(c, redisstore.IdempotencyStoreConfig{})}))
		app.Post("/orders", func(c *fx.Ctx) error { return c.JSON(201, map[string]int64{"run": runs.Add(1)}) })
		if r := post(app, "warm-up", "{}"); r.status != 201 {
			t.Fatalf("Redis up: %+v", r)
		}

		srv.Pause()
		if r := post(app, "ghost", "{}"); r.status != 503 {
			t.Fatalf("claim while Redis is paused: %+v, want 503", r)
		}
		time.Sleep(300 * time.Millisecond) // the claim waits in Redis's socket
		srv.Resume()
		if err := watch.Ping(ctx).Err(); err != nil { // Redis has read what waited
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		select {
		case ev := <-events:
			t.Fatalf("ContextTimeoutEnabled %v: the late claim wrote the key: %s %s", ctxTimeout, ev.Channel, ev.Payload)
		default:
		}
		if r := post(app, "ghost", "{}"); r.status != 201 || r.replayed != "" {
			t.Fatalf("ContextTimeoutEnabled %v: retry after Redis resumed: %+v, want the handler to run (201)", ctxTimeout, r)
		}
		if r := post(app, "ghost", "{}"); r.replayed != "true" {
			t.Fatalf("second retry: %+v, want the replay", r)
		}
		sub.Close()
		srv.Stop()
	}
}
