package redisstore_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/internal/redistest"
	"github.com/fxhq/fx/middleware/ratelimit"
	"github.com/fxhq/fx/middleware/redisstore"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"
)

// TestMain silences go-redis's own logger: TestRedisDown makes it report
// every failed dial, which is the point of that test, not news.
func TestMain(m *testing.M) {
	redis.SetLogger(quietLogger{})
	os.Exit(m.Run())
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// testTimeout is the store's deadline in the tests that check decisions,
// not timing: generous, because the machine running them may be loaded
// (a stall over the default 100 ms would fail them for nothing). The
// default deadline is what TestRedisDownFailsFast checks.
const testTimeout = 2 * time.Second

// newClient returns a client of addr that fails fast when Redis is gone.
func newClient(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr: addr, MaxRetries: -1,
		DialTimeout: 500 * time.Millisecond, ReadTimeout: time.Second, WriteTimeout: time.Second,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// newApp is an app instance with its own client, RateLimitStore and rate limit on
// GET /r, keyed by the X-Client header.
func newApp(t *testing.T, addr string, lim ratelimit.Limit, failOpen bool) *fx.App {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Use(ratelimit.New(ratelimit.Config{
		Limit:    lim,
		Store:    redisstore.NewRateLimitStore(newClient(t, addr), redisstore.RateLimitStoreConfig{Timeout: testTimeout}),
		FailOpen: failOpen,
		Key:      func(c *fx.Ctx) (string, error) { return c.Header("X-Client"), nil },
	}))
	app.Get("/r", func(c *fx.Ctx) error { return c.String(200, "ok") })
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	return app
}

// response is what serve returns.
type response struct {
	status             int
	rateLimit, retry   string
	code, reason, body string
}

// serve runs one GET /r from client through app's handler.
func serve(app *fx.App, client string) response {
	var rc fasthttp.RequestCtx
	rc.Request.SetRequestURI("/r")
	rc.Request.Header.Set("X-Client", client)
	app.Handler()(&rc)
	r := response{
		status:    rc.Response.StatusCode(),
		rateLimit: string(rc.Response.Header.Peek("RateLimit")),
		retry:     string(rc.Response.Header.Peek("Retry-After")),
		body:      string(rc.Response.Body()),
	}
	var env struct {
		Error struct {
			Code    string
			Details struct{ Reason string }
		}
	}
	if json.Unmarshal(rc.Response.Body(), &env) == nil {
		r.code, r.reason = env.Error.Code, env.Error.Details.Reason
	}
	return r
}

// TestSharedLimitExact runs two app instances, each with its own client
// and store, against one Redis: 8 goroutines send 400 requests for one key
// with a burst of 50 and a one-hour period, and exactly 50 are allowed in
// total, the rest refused with 429.
func TestSharedLimitExact(t *testing.T) {
	srv := redistest.Start(t)
	lim := ratelimit.Limit{Requests: 50, Period: time.Hour}
	apps := []*fx.App{newApp(t, srv.Addr, lim, false), newApp(t, srv.Addr, lim, false)}
	var allowed, refused, other atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		app := apps[g%2]
		wg.Go(func() {
			for range 50 {
				switch r := serve(app, "shared-client"); {
				case r.status == 200:
					allowed.Add(1)
				case r.status == 429 && r.code == fx.ErrorCodes.RateLimited:
					refused.Add(1)
				default:
					other.Add(1)
					t.Errorf("unexpected answer %d %s", r.status, r.body)
				}
			}
		})
	}
	wg.Wait()
	if allowed.Load() != 50 || refused.Load() != 350 || other.Load() != 0 {
		t.Fatalf("allowed %d, refused %d, other %d; want 50, 350, 0", allowed.Load(), refused.Load(), other.Load())
	}
	// Another client has its own bucket in the same Redis (T = 72 s).
	if r := serve(apps[0], "other-client"); r.status != 200 || r.rateLimit != `"default";r=49;t=72` {
		t.Fatalf("other client: %d RateLimit %q", r.status, r.rateLimit)
	}
}

// TestDecisions checks the script's arithmetic, and that a Redis that lost
// its script cache (SCRIPT FLUSH, a restart, a failover) is served by the
// EVAL fallback.
func TestDecisions(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.Addr)
	s := redisstore.NewRateLimitStore(c, redisstore.RateLimitStoreConfig{Prefix: "test:", Timeout: testTimeout})
	ctx := context.Background()
	lim := ratelimit.Limit{Requests: 3, Period: 3 * time.Hour} // T = 1h, burst 3
	for i, want := range []int{2, 1, 0} {
		if i == 1 {
			if err := c.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		d, err := s.Allow(ctx, "k", lim)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed || d.Remaining != want || d.Reset > time.Duration(i+1)*time.Hour || d.Reset < time.Duration(i+1)*time.Hour-time.Second {
			t.Fatalf("request %d: %+v, want allowed, remaining %d, reset %dh", i+1, d, want, i+1)
		}
	}
	d, err := s.Allow(ctx, "k", lim)
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || d.Remaining != 0 || d.RetryAfter > time.Hour || d.RetryAfter < time.Hour-time.Second {
		t.Fatalf("4th request: %+v, want refused with RetryAfter 1h", d)
	}
	if n, _ := c.Exists(ctx, "test:default:k").Result(); n != 1 {
		t.Fatal(`key "test:default:k" not written`)
	}
	if _, err := s.Allow(ctx, "k", ratelimit.Limit{}); err == nil {
		t.Fatal("an invalid limit was accepted")
	}
}

// TestKeysExpire checks that every key carries a TTL ending at its
// theoretical arrival time, and that an idle key vanishes and its client
// gets a full burst again.
func TestKeysExpire(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.Addr)
	s := redisstore.NewRateLimitStore(c, redisstore.RateLimitStoreConfig{Timeout: testTimeout})
	ctx := context.Background()

	// T = 6 min: after one request the state matters for 6 more minutes.
	if _, err := s.Allow(ctx, "slow", ratelimit.Limit{Requests: 10, Period: time.Hour}); err != nil {
		t.Fatal(err)
	}
	ttl, err := c.PTTL(ctx, redisstore.DefaultRateLimitPrefix+"default:slow").Result()
	if err != nil || ttl > 6*time.Minute || ttl < 6*time.Minute-2*time.Second {
		t.Fatalf("PTTL %v (%v), want just under 6m", ttl, err)
	}

	// T = 1 s: the key is gone a second later and the client starts over.
	lim := ratelimit.Limit{Requests: 1, Period: time.Second}
	key := redisstore.DefaultRateLimitPrefix + "default:fast"
	if d, _ := s.Allow(ctx, "fast", lim); !d.Allowed {
		t.Fatal("first request refused")
	}
	if d, _ := s.Allow(ctx, "fast", lim); d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > time.Second {
		t.Fatalf("second request: %+v, want refused for up to 1s", d)
	}
	kittest.Eventually(t, "the key expired", func() bool {
		n, err := c.Exists(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
	if d, _ := s.Allow(ctx, "fast", lim); !d.Allowed {
		t.Fatalf("after expiry: %+v, want allowed", d)
	}
}

// TestRedisDown kills Redis mid-test: the default (fail closed) answers 503
// FX_SERVICE_UNAVAILABLE with Retry-After: 1; FailOpen lets the request
// through without RateLimit headers.
func TestRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	lim := ratelimit.Limit{Requests: 100, Period: time.Minute}
	closed := newApp(t, srv.Addr, lim, false)
	open := newApp(t, srv.Addr, lim, true)
	for _, app := range []*fx.App{closed, open} {
		if r := serve(app, "c"); r.status != 200 || r.rateLimit == "" {
			t.Fatalf("Redis up: %d RateLimit %q", r.status, r.rateLimit)
		}
	}
	srv.Stop()
	r := serve(closed, "c")
	if r.status != 503 || r.code != fx.ErrorCodes.ServiceUnavailable || r.reason != ratelimit.ReasonUnavailable ||
		r.retry != "1" || r.rateLimit != "" {
		t.Fatalf("fail closed: %d %q Retry-After %q RateLimit %q", r.status, r.body, r.retry, r.rateLimit)
	}
	r = serve(open, "c")
	if r.status != 200 || r.rateLimit != "" {
		t.Fatalf("fail open: %d %q RateLimit %q", r.status, r.body, r.rateLimit)
	}
}

// BenchmarkAllow is one decision through the Redis store against a local
// redis-server (one round trip over loopback): what a request costs on top
// of BenchmarkRateLimit's in-process numbers. With go-redis's default
// options the store bounds the call on a goroutine of its own; with
// ContextTimeoutEnabled the client applies the deadline itself.
func BenchmarkAllow(b *testing.B) {
	srv := redistest.Start(b)
	for _, ctxTimeout := range []bool{false, true} {
		b.Run("ContextTimeoutEnabled="+strconv.FormatBool(ctxTimeout), func(b *testing.B) {
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeout})
			defer c.Close()
			s := redisstore.NewRateLimitStore(c, redisstore.RateLimitStoreConfig{Timeout: testTimeout})
			lim := ratelimit.Limit{Requests: 1 << 30, Period: time.Hour}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if d, err := s.Allow(ctx, "bench", lim); err != nil || !d.Allowed {
					b.Fatal(d, err)
				}
			}
		})
	}
}
