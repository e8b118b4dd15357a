package redisstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/client"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/redistest"
	"github.com/fxhq/fx/middleware"
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
		case r.status == 409 && r.code == fx.ErrorCodes.IdempotencyInFlight && r.retryAfter == "1":
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
	if r := post(apps[1], "order-42", `{"item":"pen"}`); r.status != 422 || r.code != fx.ErrorCodes.IdempotencyKeyReused {
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
	if took := time.Since(began); r.status != 503 || r.code != fx.ErrorCodes.ServiceUnavailable || r.retryAfter != "1" || took > 300*time.Millisecond {
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
	if took := time.Since(began); r.status != 503 || r.code != fx.ErrorCodes.ServiceUnavailable || took > 300*time.Millisecond || runs.Load() != before {
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

// waitReplay retries key on app until the answer is a replay (the
// background completion landed), for up to 5 s.
func waitReplay(t *testing.T, app *fx.App, key, body string) idemResult {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := post(app, key, body)
		if r.replayed == "true" || time.Now().After(deadline) {
			return r
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// With CompleteAfterResponse on Redis, the response is stored in the
// background and a retry gets it replayed: the handler ran once.
func TestIdempotencyCompleteAfterResponseReplays(t *testing.T) {
	srv := redistest.Start(t)
	var runs atomic.Int64
	app := idemApp(t, srv.Addr, idempotency.Config{ShareAnonymous: true, CompleteAfterResponse: true}, &runs, nil)
	first := post(app, "order-7", `{"item":"book"}`)
	if first.status != 201 || first.replayed != "" {
		t.Fatalf("first: %+v", first)
	}
	r := waitReplay(t, app, "order-7", `{"item":"book"}`)
	if r.status != 201 || r.replayed != "true" || r.body != first.body || r.loc != first.loc || runs.Load() != 1 {
		t.Fatalf("retry: %+v (first %+v), handler ran %d times", r, first, runs.Load())
	}
	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
}

// The weakened window, on a real Redis: Redis stops taking writes (CLIENT
// PAUSE WRITE) while the handler answers. The response is not held by the
// completion, which fails at StoreTimeout; the claim then stays until
// LockTimeout (a retry is 409), after which a retry runs the handler once
// more and that run's response is replayed.
func TestIdempotencyCompleteAfterResponseFailureExpires(t *testing.T) {
	srv := redistest.Start(t)
	var runs atomic.Int64
	gate := make(chan struct{})
	const storeTimeout, pause, lock = 300 * time.Millisecond, 900 * time.Millisecond, 2 * time.Second
	app := idemApp(t, srv.Addr, idempotency.Config{ShareAnonymous: true, CompleteAfterResponse: true, StoreTimeout: storeTimeout, LockTimeout: lock}, &runs, gate)
	answered := make(chan time.Time, 1)
	var first idemResult
	go func() { first = post(app, "order-9", `{}`); answered <- time.Now() }()
	for runs.Load() == 0 { // the claim is taken, the handler waits on gate
		time.Sleep(time.Millisecond)
	}
	admin := idemClient(t, srv.Addr)
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", pause.Milliseconds(), "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	close(gate)
	if took := (<-answered).Sub(paused); took >= storeTimeout {
		t.Fatalf("the response took %v: it waited for the completion", took)
	}
	if first.status != 201 {
		t.Fatalf("first: %+v", first)
	}
	time.Sleep(time.Until(paused.Add(pause + 50*time.Millisecond)))
	if r := post(app, "order-9", `{}`); r.status != 409 || r.code != fx.ErrorCodes.IdempotencyInFlight {
		t.Fatalf("retry before LockTimeout: %+v (want 409: the failed completion left the claim)", r)
	}
	time.Sleep(time.Until(paused.Add(lock + 100*time.Millisecond)))
	second := post(app, "order-9", `{}`)
	if second.status != 201 || second.replayed != "" || runs.Load() != 2 {
		t.Fatalf("retry after LockTimeout: %+v, handler ran %d times (want 2)", second, runs.Load())
	}
	if r := waitReplay(t, app, "order-9", `{}`); r.replayed != "true" || r.body != second.body || runs.Load() != 2 {
		t.Fatalf("later retry: %+v, handler ran %d times", r, runs.Load())
	}
	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
}

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

// idempotencyRefusals is expectFastRefusals for the idempotency store: 20
// keyed requests, each 503 FX_SERVICE_UNAVAILABLE, within 20 ms each
// once the circuit is open (the bound allows for a loaded machine); the
// handler never runs.
func idempotencyRefusals(t *testing.T, app *fx.App, runs *atomic.Int64) time.Duration {
	t.Helper()
	before := runs.Load()
	first := expectFastRefusals(t, 20, 20*time.Millisecond, func(i int) (bool, any) {
		r := post(app, "down-"+itoa(i), "{}")
		return r.status == 503 && r.code == fx.ErrorCodes.ServiceUnavailable, r
	})
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
	for _, c := range []struct {
		name     string
		down, up func(*redistest.Server)
	}{
		{"killed", (*redistest.Server).Stop, (*redistest.Server).Restart},
		{"stopped", (*redistest.Server).Pause, (*redistest.Server).Resume},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := redistest.Start(t)
			var runs atomic.Int64
			log := &stateLog{}
			app := defaultOptionsApp(t, srv.Addr, &runs, log)
			if r := post(app, "up", "{}"); r.status != 201 {
				t.Fatalf("Redis up: %+v", r)
			}
			c.down(srv)
			first := idempotencyRefusals(t, app, &runs)
			c.up(srv)
			awaitRecovery(t, 10*time.Millisecond, func(i int) bool { return post(app, "recovered-"+itoa(i), "{}").status == 201 })
			if o, cl := log.count("open"), log.count("closed"); o != 1 || cl != 1 {
				t.Fatalf("log states %q, want one open and one closed", log.states)
			}
			t.Logf("Redis %s: first 503 after %v", c.name, first)
		})
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

// Principals without a string subject do not share one scope on the
// Redis store either: two API keys configured without a Subject, and
// bearer principals whose "sub" claim is the number 1001 or 1002 (what
// middleware/jwt decodes from such a token), each run the handler and get
// their own response for the same key and body; each one's retry is its
// own replay.
func TestIdempotencyRedisScopeWithoutStringSubject(t *testing.T) {
	srv := redistest.Start(t)
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{
		"key-one-0123456789abcdef": {}, "key-two-0123456789abcdef": {},
	})
	if err != nil {
		t.Fatal(err)
	}
	numericSub := middleware.VerifierFunc(func(_ *fx.Ctx, tok string) (*middleware.Principal, error) {
		sub := map[string]float64{"tok1001": 1001, "tok1002": 1002}[tok]
		return &middleware.Principal{Scheme: middleware.SchemeBearer, Claims: map[string]any{"sub": sub}}, nil
	})
	var runs atomic.Int64
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Use(middleware.Auth(middleware.AuthConfig{APIKeys: keys, Bearer: numericSub}),
		idempotency.New(idempotency.Config{Store: redisstore.NewIdempotencyStore(idemClient(t, srv.Addr), redisstore.IdempotencyStoreConfig{})}))
	app.Post("/orders", func(c *fx.Ctx) error { return c.JSON(201, map[string]int64{"run": runs.Add(1)}) })
	send := func(name, value string) (status int, body, replayed string) {
		var rc fasthttp.RequestCtx
		rc.Request.Header.SetMethod("POST")
		rc.Request.SetRequestURI("/orders")
		rc.Request.Header.Set(idempotency.HeaderKey, "shared-key")
		rc.Request.Header.Set(name, value)
		rc.Request.SetBodyString("{}")
		app.Handler()(&rc)
		return rc.Response.StatusCode(), string(rc.Response.Body()), string(rc.Response.Header.Peek(idempotency.HeaderReplayed))
	}
	for _, pair := range [][2][2]string{
		{{"X-API-Key", "key-one-0123456789abcdef"}, {"X-API-Key", "key-two-0123456789abcdef"}},
		{{"Authorization", "Bearer tok1001"}, {"Authorization", "Bearer tok1002"}},
	} {
		_, a, _ := send(pair[0][0], pair[0][1])
		status, b, replayed := send(pair[1][0], pair[1][1])
		if status != 201 || replayed != "" || b == a {
			t.Fatalf("%v: B got %d %s (replayed %q), A got %s", pair, status, b, replayed, a)
		}
		for i, first := range []string{a, b} {
			if _, again, replayed := send(pair[i][0], pair[i][1]); again != first || replayed != "true" {
				t.Fatalf("%v retry: %s (replayed %q), want %s", pair[i], again, replayed, first)
			}
		}
	}
	if runs.Load() != 4 {
		t.Fatalf("handler ran %d times, want 4", runs.Load())
	}
}

// cutProxy is the test's load balancer: it sends each request to the next
// backend in turn. The first attempt of every call (the first request
// with a given Idempotency-Key) fails on purpose, in one of two ways,
// alternating by call: either it is forwarded, the backend runs it, and
// the proxy then drops the client's connection without an answer (the
// order exists, the client does not know it); or it is sent to a
// draining instance that answers 503 FX_SERVICE_UNAVAILABLE.
type cutProxy struct {
	backends []string
	draining string
	next     atomic.Uint64
	mu       sync.Mutex
	seen     map[string]bool
	calls    int
	cuts     atomic.Int64
	drained  atomic.Int64
	fwd      *http.Client
}

func (p *cutProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	p.mu.Lock()
	first := !p.seen[key]
	p.seen[key] = true
	var drain bool
	if first {
		p.calls++
		drain = p.calls%2 == 0
	}
	p.mu.Unlock()
	target := p.backends[p.next.Add(1)%uint64(len(p.backends))]
	if first && drain {
		target = p.draining
		p.drained.Add(1)
	}
	body, _ := io.ReadAll(r.Body)
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, "http://"+target+r.URL.RequestURI(), bytes.NewReader(body))
	req.Header = r.Header.Clone()
	resp, err := p.fwd.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if first && !drain {
		p.cuts.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // forwarded and answered, never delivered
		}
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(out)
}

// Two fx instances on one Redis behind a round-robin proxy that fails the
// first attempt of every call, half of them after the handler ran:
// 1,000 calls of POST /orders through fx/client create exactly 1,000
// orders, each caller gets its own.
func TestRetriesAcrossInstancesCreateEachOrderOnce(t *testing.T) {
	srv := redistest.Start(t)
	var mu sync.Mutex
	orders := map[string]int{} // order ID -> times created
	var seq atomic.Int64
	instance := func() *fx.App {
		app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
		app.Use(idempotency.New(idempotency.Config{
			// Decisions, not timing: generous deadlines, so that a loaded
			// machine does not turn slow Redis calls into 503s.
			Store:          redisstore.NewIdempotencyStore(idemClient(t, srv.Addr), redisstore.IdempotencyStoreConfig{Timeout: testTimeout}),
			StoreTimeout:   testTimeout,
			Required:       true,
			ShareAnonymous: true, // the test's callers are anonymous
		}))
		app.Post("/orders", func(c *fx.Ctx) error {
			in, err := fx.JSONBody[struct {
				Ref string `json:"ref"`
			}](c)
			if err != nil {
				return err
			}
			mu.Lock()
			orders[in.Ref]++
			mu.Unlock()
			return c.JSON(201, map[string]any{"ref": in.Ref, "seq": seq.Add(1)})
		})
		return app
	}
	draining := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	draining.Use(func(c *fx.Ctx, next fx.Next) error {
		c.SetHeader("Retry-After", "0")
		return fx.NewCatalogError(fx.ErrorCodes.ServiceUnavailable, "Draining")
	})
	p := &cutProxy{
		backends: []string{fxtest.Serve(t, instance()), fxtest.Serve(t, instance())},
		draining: fxtest.Serve(t, draining),
		seen:     map[string]bool{},
		fwd:      &http.Client{Timeout: 5 * time.Second},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: p}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })

	c := client.New(client.Config{
		BaseURL: "http://" + ln.Addr().String(),
		Retry:   client.Retry{MaxAttempts: 5, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond},
		// Every call here fails once on purpose: a budget that allows a
		// retry per call (the default allows one per five).
		Budget: client.NewBudget(client.BudgetConfig{Ratio: 1, MinRetries: 10}),
	})
	const calls, workers = 1000, 32
	var wg sync.WaitGroup
	var ok, typed atomic.Int64
	refs := make(chan int)
	var failMu sync.Mutex
	var failures []error
	for range workers {
		wg.Go(func() {
			for i := range refs {
				ref := "order-" + itoa(i)
				var out struct {
					Ref string `json:"ref"`
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := c.Call(ctx, "POST", "/orders", map[string]string{"ref": ref}, &out)
				cancel()
				var fe *fx.Error
				switch {
				case err == nil && out.Ref == ref:
					ok.Add(1)
				case errors.As(err, &fe):
					typed.Add(1)
				default:
					failMu.Lock()
					failures = append(failures, err)
					failMu.Unlock()
				}
			}
		})
	}
	for i := range calls {
		refs <- i
	}
	close(refs)
	wg.Wait()

	if len(failures) > 0 {
		t.Fatalf("%d calls ended with neither their order nor a typed *fx.Error; first: %v", len(failures), failures[0])
	}
	mu.Lock()
	defer mu.Unlock()
	for ref, n := range orders {
		if n != 1 {
			t.Errorf("order %s created %d times", ref, n)
		}
	}
	if len(orders) != calls || ok.Load() != calls {
		t.Fatalf("%d orders created, %d callers saw their order, %d typed errors; want %d and %d",
			len(orders), ok.Load(), typed.Load(), calls, calls)
	}
	if p.cuts.Load() != calls/2 || p.drained.Load() != calls/2 {
		t.Fatalf("the proxy cut %d and drained %d first attempts, want %d each", p.cuts.Load(), p.drained.Load(), calls/2)
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}
