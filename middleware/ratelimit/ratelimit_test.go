package ratelimit_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/ratelimit"
	"github.com/fxhq/fx/nethttp"
	"github.com/valyala/fasthttp"
)

// TestRateLimitGCRA checks the algorithm's arithmetic on the memory store:
// a burst, then one request per interval, with exact RetryAfter, Remaining
// and Reset.
func TestRateLimitGCRA(t *testing.T) {
	clk := newFakeClock()
	s := ratelimit.NewMemoryStore(ratelimit.MemoryStoreConfig{Now: clk.Now})
	lim := ratelimit.Limit{Requests: 3, Period: 3 * time.Second} // T = 1s, burst 3
	ctx := context.Background()
	type want struct {
		allowed      bool
		remaining    int
		retry, reset time.Duration
	}
	step := func(w want) {
		t.Helper()
		d, err := s.Allow(ctx, "k", lim)
		if err != nil {
			t.Fatal(err)
		}
		got := want{d.Allowed, d.Remaining, d.RetryAfter, d.Reset}
		if got != w {
			t.Fatalf("got %+v, want %+v", got, w)
		}
	}
	step(want{true, 2, 0, 1 * time.Second})
	step(want{true, 1, 0, 2 * time.Second})
	step(want{true, 0, 0, 3 * time.Second})
	step(want{false, 0, 1 * time.Second, 3 * time.Second}) // refusals are not counted
	step(want{false, 0, 1 * time.Second, 3 * time.Second})
	clk.Advance(400 * time.Millisecond)
	step(want{false, 0, 600 * time.Millisecond, 2600 * time.Millisecond})
	clk.Advance(600 * time.Millisecond)
	step(want{true, 0, 0, 3 * time.Second})
	clk.Advance(time.Hour) // idle: the full burst is back, no more
	step(want{true, 2, 0, 1 * time.Second})

	// Another policy on the same store has its own bucket for the same key.
	d, _ := s.Allow(ctx, "k", ratelimit.Limit{Name: "other", Requests: 1, Period: time.Second})
	if !d.Allowed {
		t.Fatal("a second policy shares the first one's bucket")
	}
	if _, err := s.Allow(ctx, "k", ratelimit.Limit{Requests: 0, Period: time.Second}); err == nil {
		t.Fatal("Allow accepted an invalid Limit")
	}
}

// rlApp is an app with RateLimit on GET /r, whose handler answers "ok" or,
// with ?fail=1, a 403.
func rlApp(cfg ratelimit.Config) *fx.App {
	app := fx.New(quiet)
	app.Use(ratelimit.New(cfg))
	app.Get("/r", func(c *fx.Ctx) error {
		if c.Query("fail") != "" {
			return fx.NewCatalogError(fx.ErrorCodes.Forbidden, "no")
		}
		return c.JSON(200, map[string]string{"ok": "yes"})
	})
	return app
}

// TestRateLimitHeaders checks the 429 envelope, Retry-After and the draft's
// RateLimit and RateLimit-Policy fields on allowed and refused responses.
func TestRateLimitHeaders(t *testing.T) {
	clk := newFakeClock()
	app := rlApp(ratelimit.Config{
		Limit: ratelimit.Limit{Name: "api", Requests: 2, Period: time.Minute},
		Store: ratelimit.NewMemoryStore(ratelimit.MemoryStoreConfig{Now: clk.Now}),
	})
	check := func(r *fxtest.Response, limit, retry string) {
		t.Helper()
		if got := r.Header().Get("RateLimit-Policy"); got != `"api";q=2;w=60` {
			t.Fatalf("RateLimit-Policy %q", got)
		}
		if got := r.Header().Get("RateLimit"); got != limit {
			t.Fatalf("RateLimit %q, want %q", got, limit)
		}
		if got := r.Header().Get("Retry-After"); got != retry {
			t.Fatalf("Retry-After %q, want %q", got, retry)
		}
	}
	r := get(t, app, "/r")
	if r.Status != 200 {
		t.Fatalf("first request: %d %s", r.Status, r.Body)
	}
	check(r, `"api";r=1;t=30`, "")
	r = get(t, app, "/r")
	check(r, `"api";r=0;t=60`, "")
	r = get(t, app, "/r")
	expectError(t, r, 429, fx.ErrorCodes.RateLimited, ratelimit.ReasonRateLimited)
	check(r, `"api";r=0;t=30`, "30")
	clk.Advance(29*time.Second + 500*time.Millisecond) // 0.5 s left: rounded up
	r = get(t, app, "/r")
	expectError(t, r, 429, fx.ErrorCodes.RateLimited, ratelimit.ReasonRateLimited)
	check(r, `"api";r=0;t=1`, "1")
	clk.Advance(500 * time.Millisecond)
	// Allowed, and the handler fails: the headers set before next survive.
	r = get(t, app, "/r?fail=1")
	expectError(t, r, 403, fx.ErrorCodes.Forbidden, "")
	check(r, `"api";r=0;t=60`, "")
}

// TestRateLimitKeys checks that each key helper separates buckets the way
// it says and refuses requests it has no key for.
func TestRateLimitKeys(t *testing.T) {
	lim := ratelimit.Limit{Requests: 1, Period: time.Hour}
	setPrincipal := func(c *fx.Ctx, next fx.Next) error {
		if s := c.Header("X-Sub"); s != "" {
			middleware.SetPrincipal(c, &middleware.Principal{Subject: s, Scheme: c.Header("X-Scheme")})
		}
		return next()
	}
	build := func(key func(*fx.Ctx) (string, error), before ...fx.Middleware) *fx.App {
		app := fx.New(quiet)
		app.Use(before...)
		app.Use(ratelimit.New(ratelimit.Config{Limit: lim, Key: key}))
		app.Get("/r", func(c *fx.Ctx) error { return c.JSON(200, map[string]int{}) })
		return app
	}
	status := func(app *fx.App, header ...string) int {
		t.Helper()
		return get(t, app, "/r", header...).Status
	}

	t.Run("principal", func(t *testing.T) {
		app := build(ratelimit.KeyByPrincipal, setPrincipal)
		r := get(t, app, "/r")
		expectError(t, r, 401, fx.ErrorCodes.Unauthenticated, middleware.ReasonMissingCredentials)
		if ch := r.Header().Get("WWW-Authenticate"); ch == "" {
			t.Fatal("401 without WWW-Authenticate")
		}
		for _, c := range []struct {
			sub  string
			want int
		}{{"alice", 200}, {"bob", 200}, {"alice", 429}, {"bob", 429}} {
			if got := status(app, "X-Sub", c.sub); got != c.want {
				t.Fatalf("%s: %d, want %d", c.sub, got, c.want)
			}
		}
	})
	t.Run("apikey", func(t *testing.T) {
		app := build(ratelimit.KeyByAPIKey, setPrincipal)
		r := get(t, app, "/r", "X-Sub", "alice", "X-Scheme", middleware.SchemeBearer)
		expectError(t, r, 401, fx.ErrorCodes.Unauthenticated, middleware.ReasonMissingCredentials)
		if ch := r.Header().Get("WWW-Authenticate"); !strings.HasPrefix(ch, "APIKey realm=") {
			t.Fatalf("WWW-Authenticate %q, want an APIKey challenge", ch)
		}
		h := []string{"X-Sub", "billing", "X-Scheme", middleware.SchemeAPIKey}
		if a, b := status(app, h...), status(app, h...); a != 200 || b != 429 {
			t.Fatalf("API key: %d then %d", a, b)
		}
	})
	t.Run("tenant", func(t *testing.T) {
		app := build(ratelimit.KeyByTenant, middleware.Tenant(middleware.TenantConfig{}))
		expectError(t, get(t, app, "/r"), 400, fx.ErrorCodes.TenantRequired, middleware.ReasonMissingTenant)
		for _, c := range []struct {
			tenant string
			want   int
		}{{"acme", 200}, {"globex", 200}, {"acme", 429}} {
			if got := status(app, "X-Tenant-ID", c.tenant); got != c.want {
				t.Fatalf("%s: %d, want %d", c.tenant, got, c.want)
			}
		}
	})
	t.Run("custom exempt", func(t *testing.T) {
		app := build(func(c *fx.Ctx) (string, error) { return c.Header("X-Client"), nil })
		for range 3 { // no key: exempt, never counted
			if got := status(app); got != 200 {
				t.Fatalf("exempt request: %d", got)
			}
		}
		h := []string{"X-Client", "c1"}
		if a, b := status(app, h...), status(app, h...); a != 200 || b != 429 {
			t.Fatalf("custom key: %d then %d", a, b)
		}
	})
	t.Run("custom error", func(t *testing.T) {
		app := build(func(c *fx.Ctx) (string, error) {
			return "", fx.NewCatalogError(fx.ErrorCodes.BadRequest, "no client id")
		})
		expectError(t, get(t, app, "/r"), 400, fx.ErrorCodes.BadRequest, "")
	})
}

// TestRateLimitKeyByIP drives the handler with remote addresses: IPv4
// addresses have a bucket each, IPv6 addresses share their /64's.
func TestRateLimitKeyByIP(t *testing.T) {
	app := rlApp(ratelimit.Config{Limit: ratelimit.Limit{Requests: 1, Period: time.Hour}})
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	h := app.Handler()
	serve := func(ip string) int {
		var rc fasthttp.RequestCtx
		rc.Request.SetRequestURI("/r")
		rc.SetRemoteAddr(&net.TCPAddr{IP: net.ParseIP(ip), Port: 40000})
		h(&rc)
		return rc.Response.StatusCode()
	}
	for _, c := range []struct {
		ip   string
		want int
	}{
		{"192.0.2.1", 200},
		{"192.0.2.2", 200},
		{"192.0.2.1", 429},
		{"::ffff:192.0.2.2", 429}, // the same IPv4 address, mapped
		{"2001:db8:1:2::1", 200},
		{"2001:db8:1:2:ffff::9", 429}, // same /64
		{"2001:db8:1:3::1", 200},      // next /64
	} {
		if got := serve(c.ip); got != c.want {
			t.Fatalf("%s: %d, want %d", c.ip, got, c.want)
		}
	}
}

// Behind a trusted proxy KeyByIP keys by the forwarded client, and a
// client that sends its own X-Forwarded-For straight to the server still
// gets the bucket of its own address.
func TestRateLimitKeyByIPTrustedProxy(t *testing.T) {
	app := fx.New(fx.Config{Logger: quiet.Logger, TrustedProxies: []string{"10.0.0.0/8"}})
	app.Use(ratelimit.New(ratelimit.Config{Limit: ratelimit.Limit{Requests: 1, Period: time.Hour}}))
	app.Get("/r", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	h := app.Handler()
	serve := func(peer, xff string) int {
		var rc fasthttp.RequestCtx
		rc.Request.SetRequestURI("/r")
		if xff != "" {
			rc.Request.Header.Set("X-Forwarded-For", xff)
		}
		rc.SetRemoteAddr(&net.TCPAddr{IP: net.ParseIP(peer), Port: 40000})
		h(&rc)
		return rc.Response.StatusCode()
	}
	for _, c := range []struct {
		peer, xff string
		want      int
	}{
		{"10.1.1.1", "198.51.100.7", 200},
		{"10.2.2.2", "198.51.100.8", 200},           // another client through another proxy
		{"10.2.2.2", "198.51.100.7", 429},           // the first client again
		{"203.0.113.9", "198.51.100.99", 200},       // untrusted peer: its own address
		{"203.0.113.9", "198.51.100.100", 429},      // the header cannot buy a new bucket
		{"10.1.1.1", "", 200},                       // the proxy's own request
		{"10.1.1.1", "198.51.100.8, 10.3.3.3", 429}, // trusted hops skipped right to left
	} {
		if got := serve(c.peer, c.xff); got != c.want {
			t.Fatalf("peer %s X-Forwarded-For %q: %d, want %d", c.peer, c.xff, got, c.want)
		}
	}
}

// failingStore fails every call while down is set.
type failingStore struct {
	down  atomic.Bool
	inner ratelimit.Store
}

var errStoreDown = errors.New("store: connection refused")

func (s *failingStore) Allow(ctx context.Context, key string, l ratelimit.Limit) (ratelimit.Decision, error) {
	if s.down.Load() {
		return ratelimit.Decision{}, errStoreDown
	}
	return s.inner.Allow(ctx, key, l)
}

// TestRateLimitStoreFailure checks both failure modes: closed (503 with
// Retry-After, the store's error logged with the request) and open
// (passes, no headers, one log line for a burst of failures).
func TestRateLimitStoreFailure(t *testing.T) {
	for _, open := range []bool{false, true} {
		fs := &failingStore{inner: ratelimit.NewMemoryStore(ratelimit.MemoryStoreConfig{})}
		var logs bytes.Buffer
		app := fx.New(fx.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		app.Use(ratelimit.New(ratelimit.Config{
			Limit: ratelimit.Limit{Requests: 5, Period: time.Second}, Store: fs, FailOpen: open,
		}))
		app.Get("/r", func(c *fx.Ctx) error { return c.JSON(200, map[string]string{}) })
		if r := get(t, app, "/r"); r.Status != 200 || r.Header().Get("RateLimit") == "" {
			t.Fatalf("open=%v, store up: %d, RateLimit %q", open, r.Status, r.Header().Get("RateLimit"))
		}
		fs.down.Store(true)
		r := get(t, app, "/r")
		if open {
			if r.Status != 200 || r.Header().Get("RateLimit") != "" {
				t.Fatalf("FailOpen: %d, RateLimit %q", r.Status, r.Header().Get("RateLimit"))
			}
			get(t, app, "/r")
			get(t, app, "/r")
			if n := strings.Count(logs.String(), "connection refused"); n != 1 {
				t.Fatalf("FailOpen: %d log lines for 3 failures within a second, want 1:\n%s", n, logs.String())
			}
			continue
		}
		expectError(t, r, 503, fx.ErrorCodes.ServiceUnavailable, ratelimit.ReasonUnavailable)
		if r.Header().Get("Retry-After") != "1" || r.Header().Get("RateLimit") != "" {
			t.Fatalf("fail closed: Retry-After %q RateLimit %q", r.Header().Get("Retry-After"), r.Header().Get("RateLimit"))
		}
		if !strings.Contains(logs.String(), "connection refused") {
			t.Fatalf("fail closed: the store's error was not logged:\n%s", logs.String())
		}
	}
}

// TestRateLimitConfigPanics checks that an invalid Limit panics at
// construction, naming every problem.
func TestRateLimitConfigPanics(t *testing.T) {
	for _, c := range []struct {
		lim  ratelimit.Limit
		want []string
	}{
		{ratelimit.Limit{}, []string{"Requests is 0", "Period is 0s"}},
		{ratelimit.Limit{Requests: 1, Period: 1500 * time.Millisecond}, []string{"whole number of seconds"}},
		{ratelimit.Limit{Requests: 10, Period: time.Second, Burst: -1}, []string{"Burst is -1"}},
		{ratelimit.Limit{Name: `a"b`, Requests: 1, Period: time.Second}, []string{"Name"}},
		{ratelimit.Limit{Requests: 2_000_000, Period: time.Second}, []string{"at least 1µs"}},
	} {
		func() {
			defer func() {
				msg, _ := recover().(string)
				for _, w := range c.want {
					if !strings.Contains(msg, w) {
						t.Errorf("%+v: panic %q does not mention %q", c.lim, msg, w)
					}
				}
			}()
			ratelimit.New(ratelimit.Config{Limit: c.lim})
		}()
	}
}

// TestMemoryStoreConcurrentExact sends 8×500 concurrent requests for one
// key with a burst of 100 and a one-hour period: exactly 100 are allowed.
// Run with -race it also checks the store's locking.
func TestMemoryStoreConcurrentExact(t *testing.T) {
	app := rlApp(ratelimit.Config{
		Limit: ratelimit.Limit{Requests: 100, Period: time.Hour},
		Key:   func(*fx.Ctx) (string, error) { return "shared", nil },
	})
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	h := app.Handler()
	var allowed, refused atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var rc fasthttp.RequestCtx
			rc.Request.SetRequestURI("/r")
			for range 500 {
				rc.Response.Reset()
				h(&rc)
				switch rc.Response.StatusCode() {
				case 200:
					allowed.Add(1)
				case 429:
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if allowed.Load() != 100 || refused.Load() != 3900 {
		t.Fatalf("allowed %d, refused %d; want 100 and 3900", allowed.Load(), refused.Load())
	}
}

// TestRateLimitKeyByIPAdapterReusesAddress serves through the net/http
// adapter, which parses each request's address into memory it reuses for
// the next request (KeyByIP's key aliases it; TestMemoryStoreCopiesKeys
// shows the store copes): buckets stay per address and per IPv6 /64.
func TestRateLimitKeyByIPAdapterReusesAddress(t *testing.T) {
	app := rlApp(ratelimit.Config{Limit: ratelimit.Limit{Requests: 1, Period: time.Hour}})
	h := nethttp.Handler(app)
	for i, c := range []struct {
		addr string
		want int
	}{
		{"192.0.2.1:1000", 200},
		{"192.0.2.2:1000", 200},
		{"192.0.2.1:1001", 429},
		{"192.0.2.2:1001", 429},
		{"[2001:db8::1]:1000", 200},
		{"[2001:db8::2]:1000", 429}, // same /64
	} {
		req := httptest.NewRequest("GET", "/r", nil)
		req.RemoteAddr = c.addr
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Fatalf("request %d from %s: %d, want %d", i+1, c.addr, rec.Code, c.want)
		}
	}
}

// TestNewDeclares: a rate limit declares its 429 with the RateLimit
// fields and Retry-After, and its 503 only when its store can fail and it
// fails closed.
func TestNewDeclares(t *testing.T) {
	lim := ratelimit.Limit{Name: "l", Requests: 1, Period: time.Second}
	remote := &failingStore{inner: ratelimit.NewMemoryStore(ratelimit.MemoryStoreConfig{})}
	for name, c := range map[string]struct {
		cfg  ratelimit.Config
		want []string
	}{
		"memory":           {ratelimit.Config{Limit: lim}, []string{fx.ErrorCodes.RateLimited}},
		"remote":           {ratelimit.Config{Limit: lim, Store: remote}, []string{fx.ErrorCodes.RateLimited, fx.ErrorCodes.ServiceUnavailable}},
		"remote, FailOpen": {ratelimit.Config{Limit: lim, Store: remote, FailOpen: true}, []string{fx.ErrorCodes.RateLimited}},
	} {
		d := fx.DeclarationOf(ratelimit.New(c.cfg))
		var got []string
		for _, e := range d.Errors {
			if s := fx.ErrorStatus[e.Code]; s != e.Status {
				t.Errorf("%s: %s declared with status %d", name, e.Code, e.Status)
			}
			got = append(got, e.Code)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s declares %v, want %v", name, got, c.want)
		}
		var headers []string
		for _, h := range d.Headers {
			headers = append(headers, h.Name)
		}
		if !slices.Equal(headers, []string{"RateLimit", "RateLimit-Policy", "Retry-After"}) {
			t.Errorf("%s declares headers %v", name, headers)
		}
	}
}
