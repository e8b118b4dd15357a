package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/redistest"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/fxhq/fx/middleware/redisstore"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"
)

// idemClient is a client of addr whose calls end at their context's
// deadline (ContextTimeoutEnabled), as the store's documentation asks.
func idemClient(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// idemApp is one app instance on Redis at addr: POST /orders counts its
// runs in runs and waits for gate (when not nil) before answering 201.
func idemApp(t testing.TB, addr string, cfg idempotency.Config, runs *atomic.Int64, gate <-chan struct{}) *fx.App {
	// The store's own deadline follows the test's StoreTimeout (0: both
	// default to 100 ms).
	cfg.Store = redisstore.NewIdempotencyStore(idemClient(t, addr), redisstore.IdempotencyStoreConfig{Timeout: cfg.StoreTimeout})
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Use(idempotency.New(cfg))
	app.Post("/orders", func(c *fx.Ctx) error {
		n := runs.Add(1)
		if gate != nil {
			<-gate
		}
		c.SetHeader("Location", "/orders/1")
		return c.JSON(201, map[string]int64{"run": n})
	})
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	return app
}

type idemResult struct {
	status                          int
	body, replayed, retryAfter, loc string
	code                            string
}

// post sends POST /orders with key and body through app's handler.
func post(app *fx.App, key, body string) idemResult {
	var rc fasthttp.RequestCtx
	rc.Request.Header.SetMethod("POST")
	rc.Request.SetRequestURI("/orders")
	rc.Request.Header.Set(idempotency.HeaderKey, key)
	rc.Request.SetBodyString(body)
	app.Handler()(&rc)
	r := idemResult{
		status: rc.Response.StatusCode(), body: string(rc.Response.Body()),
		replayed:   string(rc.Response.Header.Peek(idempotency.HeaderReplayed)),
		retryAfter: string(rc.Response.Header.Peek("Retry-After")),
		loc:        string(rc.Response.Header.Peek("Location")),
	}
	var env struct{ Error fx.Error }
	if json.Unmarshal(rc.Response.Body(), &env) == nil {
		r.code = env.Error.Code
	}
	return r
}

// Two app instances on one Redis; 50 concurrent duplicates of one key,
// split across both: the handler runs exactly once, every other caller
// gets the replay or 409 FX_IDEMPOTENCY_IN_FLIGHT. The callers start
// 3 ms apart and the first run is held 75 ms, so both answers occur.
func TestIdempotencyTwoInstancesRunOnce(t *testing.T) {
	srv := redistest.Start(t)
	var runs atomic.Int64
	gate := make(chan struct{})
	apps := []*fx.App{
		// Decisions, not timing: a generous deadline, so that a loaded
		// machine does not turn slow calls into 503s.
		idemApp(t, srv.Addr, idempotency.Config{ShareAnonymous: true, StoreTimeout: testTimeout}, &runs, gate),
		idemApp(t, srv.Addr, idempotency.Config{ShareAnonymous: true, StoreTimeout: testTimeout}, &runs, gate),
	}
	const callers = 50
	results := make([]idemResult, callers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		wg.Go(func() {
			<-start
			time.Sleep(time.Duration(i) * 3 * time.Millisecond)
			results[i] = post(apps[i%2], "order-42", `{"item":"book"}`)
		})
	}
	close(start)
	// Hold the first run until most duplicates have been refused, then
	// let it finish so the rest see the replay.
	time.Sleep(75 * time.Millisecond)
	close(gate)
	wg.Wait()
	var created, replayed, inFlight int
	for _, r := range results {
		switch {
		case r.status == 201 && r.replayed == "":
			created++
		case r.status == 201 && r.replayed == "true" && r.body == `{"run":1}` && r.loc == "/orders/1":
			replayed++
		case r.status == 409 && r.code == fx.CodeIdempotencyInFlight && r.retryAfter == "1":
			inFlight++
		default:
			t.Errorf("unexpected answer %+v", r)
		}
	}
	if runs.Load() != 1 || created != 1 || replayed == 0 || inFlight == 0 {
		t.Fatalf("handler ran %d times, %d created (want exactly 1), %d replayed, %d in flight", runs.Load(), created, replayed, inFlight)
	}
	t.Logf("1 created, %d replayed, %d in flight", replayed, inFlight)
	for _, app := range apps { // later retries on either instance get the replay
		if r := post(app, "order-42", `{"item":"book"}`); r.replayed != "true" || r.body != `{"run":1}` {
			t.Fatalf("later retry: %+v", r)
		}
	}
	if r := post(apps[1], "order-42", `{"item":"pen"}`); r.status != 422 || r.code != fx.CodeIdempotencyKeyReused {
		t.Fatalf("other body: %+v", r)
	}
}

// An instance dies mid-request (its claim is never completed): a retry on
// another instance gets 409 until the claim's lock expires, then runs the
// handler once. When the "dead" instance finishes late, its response is
// not stored (its fencing token lost the key): retries keep getting the
// second run's response.
func TestIdempotencyExpiredClaimTakenOver(t *testing.T) {
	srv := redistest.Start(t)
	cfg := idempotency.Config{ShareAnonymous: true, LockTimeout: 300 * time.Millisecond}
	var deadRuns, liveRuns atomic.Int64
	hang := make(chan struct{})
	dead := idemApp(t, srv.Addr, cfg, &deadRuns, hang)
	live := idemApp(t, srv.Addr, cfg, &liveRuns, nil)

	late := make(chan idemResult)
	go func() { late <- post(dead, "k", "{}") }()
	for deadRuns.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if r := post(live, "k", "{}"); r.status != 409 || liveRuns.Load() != 0 {
		t.Fatalf("retry while claimed: %+v", r)
	}
	time.Sleep(400 * time.Millisecond) // the claim's lock expires
	first := post(live, "k", "{}")
	if first.status != 201 || first.replayed != "" || liveRuns.Load() != 1 {
		t.Fatalf("retry after expiry: %+v runs %d", first, liveRuns.Load())
	}
	close(hang) // the late finisher completes: fenced off
	if r := <-late; r.status != 201 {
		t.Fatalf("late finisher answered %+v", r)
	}
	for _, app := range []*fx.App{live, dead} {
		if r := post(app, "k", "{}"); r.replayed != "true" || r.body != first.body {
			t.Fatalf("replay after the late finish: %+v, want %q", r, first.body)
		}
	}
	if liveRuns.Load() != 1 || deadRuns.Load() != 1 {
		t.Fatalf("runs: live %d dead %d", liveRuns.Load(), deadRuns.Load())
	}
}

// The store's fencing directly: a stale token's Complete and Release fail
// with ErrFenced and leave the new claim intact.
func TestIdempotencyStoreFencing(t *testing.T) {
	srv := redistest.Start(t)
	s := redisstore.NewIdempotencyStore(idemClient(t, srv.Addr), redisstore.IdempotencyStoreConfig{})
	ctx := context.Background()
	fp := idempotency.Fingerprint{1, 2, 3}
	old, _, err := s.Claim(ctx, "k", fp, 50*time.Millisecond)
	if err != nil || old == 0 {
		t.Fatal(old, err)
	}
	if tok, held, err := s.Claim(ctx, "k", fp, time.Minute); err != nil || tok != 0 || held.State != idempotency.InFlight || held.Fingerprint != fp {
		t.Fatalf("claim while held: %d %+v %v", tok, held, err)
	}
	time.Sleep(80 * time.Millisecond)
	fresh, _, err := s.Claim(ctx, "k", fp, time.Minute)
	if err != nil || fresh == 0 || fresh == old {
		t.Fatalf("takeover: %d %v", fresh, err)
	}
	if err := s.Complete(ctx, "k", old, idempotency.Response{Status: 200}, time.Hour); !errors.Is(err, idempotency.ErrFenced) {
		t.Fatalf("stale Complete: %v", err)
	}
	if err := s.Release(ctx, "k", old); !errors.Is(err, idempotency.ErrFenced) {
		t.Fatalf("stale Release: %v", err)
	}
	resp := idempotency.Response{Status: 201, Header: []idempotency.Header{{Name: "Content-Type", Value: "application/json"}, {Name: "Location", Value: "/x"}}, Body: []byte(`{"a":1}`)}
	if err := s.Complete(ctx, "k", fresh, resp, time.Hour); err != nil {
		t.Fatal(err)
	}
	rec, ok, err := s.Get(ctx, "k")
	if err != nil || !ok || rec.State != idempotency.Completed || rec.Fingerprint != fp || rec.Response.Status != 201 ||
		len(rec.Response.Header) != 2 || rec.Response.Header[1] != resp.Header[1] || string(rec.Response.Body) != `{"a":1}` {
		t.Fatalf("Get: %+v %v %v", rec, ok, err)
	}
	if _, ok, err := s.Get(ctx, "absent"); ok || err != nil {
		t.Fatalf("Get absent: %v %v", ok, err)
	}
}

// Redis killed: fail closed is the 503 FX_SERVICE_UNAVAILABLE envelope
// with Retry-After, fail open runs the handler. A Redis that hangs (a
// peer that accepts and never answers) is decided within StoreTimeout
// (100 ms by default): the test allows 300 ms.
func TestIdempotencyRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	var runs atomic.Int64
	closed := idemApp(t, srv.Addr, idempotency.Config{ShareAnonymous: true}, &runs, nil)
	open := idemApp(t, srv.Addr, idempotency.Config{ShareAnonymous: true, FailOpen: true}, &runs, nil)
	if r := post(closed, "up", "{}"); r.status != 201 {
		t.Fatalf("Redis up: %+v", r)
	}
	srv.Stop()
	began := time.Now()
	r := post(closed, "down", "{}")
	if took := time.Since(began); r.status != 503 || r.code != fx.CodeServiceUnavailable || r.retryAfter != "1" || took > 300*time.Millisecond {
		t.Fatalf("fail closed: %+v in %v", r, took)
	}
	if r := post(open, "down", "{}"); r.status != 201 {
		t.Fatalf("fail open: %+v", r)
	}

	hung := hangingPeer(t)
	app := idemApp(t, hung, idempotency.Config{ShareAnonymous: true}, &runs, nil)
	before := runs.Load()
	began = time.Now()
	r = post(app, "k", "{}")
	if took := time.Since(began); r.status != 503 || r.code != fx.CodeServiceUnavailable || took > 300*time.Millisecond || runs.Load() != before {
		t.Fatalf("hung Redis: %+v in %v", r, took)
	}
}

// hangingPeer listens on a loopback port, accepts connections and reads
// them, and never answers: a Redis that hangs.
func hangingPeer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	t.Cleanup(func() { l.Close(); conns.Wait() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				defer c.Close()
				buf := make([]byte, 4096)
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			})
		}
	}()
	return l.Addr().String()
}

// BenchmarkIdempotencyRedis is what the Redis store adds to a request that
// is not a retry: a Claim of a fresh key and the Complete of its response,
// two round trips to a local redis-server. The middleware's own work is
// BenchmarkIdempotency in package idempotency; BenchmarkAllow is one round
// trip for comparison.
func BenchmarkIdempotencyRedis(b *testing.B) {
	srv := redistest.Start(b)
	s := redisstore.NewIdempotencyStore(idemClient(b, srv.Addr), redisstore.IdempotencyStoreConfig{Timeout: testTimeout})
	ctx := context.Background()
	resp := idempotency.Response{
		Status: 201, Body: []byte(`{"id":1}`),
		Header: []idempotency.Header{{Name: "Content-Type", Value: "application/json"}},
	}
	key := make([]byte, 0, 32)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		key = strconv.AppendInt(append(key[:0], "scope\n"...), int64(i), 10)
		// Each call bounded as the middleware bounds it (Config.StoreTimeout;
		// generous, so that a loaded machine does not fail the benchmark).
		cctx, cancel := context.WithTimeout(ctx, testTimeout)
		token, _, err := s.Claim(cctx, string(key), idempotency.Fingerprint{1}, time.Minute)
		cancel()
		if err != nil || token == 0 {
			b.Fatal(token, err)
		}
		cctx, cancel = context.WithTimeout(ctx, testTimeout)
		err = s.Complete(cctx, string(key), token, resp, time.Minute)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
	}
}
