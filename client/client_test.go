package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/valyala/fasthttp"
)

// serve runs app on a loopback port for the test and returns its base URL.
func serve(t testing.TB, app *fx.App) string {
	t.Helper()
	return "http://" + fxtest.Serve(t, app)
}

// quietApp is an App whose 5xx log lines do not clutter the test output.
func quietApp() *fx.App {
	return fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
}

// countedApp is a quiet App answering GET path with h, each request
// counted in calls before h runs.
func countedApp(path string, calls *atomic.Int64, h func(c *fx.Ctx) error) *fx.App {
	app := quietApp()
	app.Get(path, func(c *fx.Ctx) error {
		calls.Add(1)
		return h(c)
	})
	return app
}

// transports runs f once with the fasthttp transport and once with net/http.
func transports(t *testing.T, f func(t *testing.T, cfg Config)) {
	t.Run("fasthttp", func(t *testing.T) { f(t, Config{}) })
	t.Run("net/http", func(t *testing.T) { f(t, Config{HTTPClient: &http.Client{}}) })
}

// newClient is New whose idle connections are closed when the test ends,
// before the server it calls shuts down (t.Cleanup runs last-registered
// first): a server's shutdown otherwise waits up to a second for each
// idle keep-alive connection to be closed by the client.
func newClient(t testing.TB, cfg Config) *Client {
	c := New(cfg)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// skipWaits makes c's waits before a retry end at once, and returns what
// they would have been: a test of a server's hint (Retry-After: 1) checks
// the wait asked for instead of sleeping through it.
func skipWaits(c *Client) (waits func() []time.Duration) {
	var mu sync.Mutex
	var asked []time.Duration
	c.newTimer = func(d time.Duration) *time.Timer {
		mu.Lock()
		asked = append(asked, d)
		mu.Unlock()
		return time.NewTimer(0)
	}
	return func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(asked)
	}
}

func fast(cfg Config) Config {
	cfg.Retry.BaseDelay, cfg.Retry.MaxDelay = time.Millisecond, 5*time.Millisecond
	return cfg
}

func TestEnvelopeBecomesFxError(t *testing.T) {
	t.Parallel()
	app := quietApp()
	app.Get("/users/:id", func(c *fx.Ctx) error {
		return fx.NewError(404, "APP_USER_NOT_FOUND", "User not found", map[string]string{"id": c.Param("id")})
	})
	app.Post("/orders", func(c *fx.Ctx) error {
		var in struct {
			Qty int `json:"qty"`
		}
		in, err := fx.JSONBody[struct {
			Qty int `json:"qty"`
		}](c)
		if err != nil {
			return err
		}
		return c.JSON(201, map[string]int{"qty": in.Qty})
	})
	base := serve(t, app)
	transports(t, func(t *testing.T, cfg Config) {
		cfg.BaseURL = base
		c := newClient(t, cfg)
		err := c.Call(context.Background(), "GET", "/users/7", nil, nil)
		var e *fx.Error
		if !errors.As(err, &e) {
			t.Fatalf("err = %T %v, want *fx.Error", err, err)
		}
		if e.Status != 404 || e.Code != "APP_USER_NOT_FOUND" || e.Message != "User not found" {
			t.Fatalf("got %+v", e)
		}
		if d, _ := e.Details.(map[string]any); d["id"] != "7" {
			t.Fatalf("details = %#v", e.Details)
		}

		// A catalog code: the framework's own 404 and 422.
		err = c.Call(context.Background(), "GET", "/nope", nil, nil)
		if !errors.As(err, &e) || e.Code != fx.ErrorCodes.NotFound || e.Status != 404 {
			t.Fatalf("unmatched route: %v", err)
		}
		err = c.Do2(t, "POST", "/orders", "{bad")
		if !errors.As(err, &e) || e.Code != fx.ErrorCodes.ValidationError || e.Status != 422 {
			t.Fatalf("bad body: %v", err)
		}

		var out struct{ Qty int }
		if err := c.Call(context.Background(), "POST", "/orders", map[string]int{"qty": 3}, &out); err != nil || out.Qty != 3 {
			t.Fatalf("success: %v %+v", err, out)
		}
	})
}

// Do2 sends a raw body (test helper).
func (c *Client) Do2(t *testing.T, method, path, body string) error {
	t.Helper()
	_, err := c.Do(context.Background(), &Request{Method: method, Path: path, Body: []byte(body)})
	return err
}

func TestNonEnvelopeErrorStatus(t *testing.T) {
	t.Parallel()
	srv := rawServer(t, func(conn net.Conn, _ *http.Request) {
		io.WriteString(conn, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: 11\r\n\r\n<h1>bad</h1")
	})
	c := newClient(t, fast(Config{BaseURL: srv.url, Retry: Retry{MaxAttempts: 1}}))
	err := c.Call(context.Background(), "GET", "/", nil, nil)
	var u *UnexpectedResponseError
	if !errors.As(err, &u) || u.Status != 502 || u.ContentType != "text/html" {
		t.Fatalf("err = %#v", err)
	}
	var e *fx.Error
	if errors.As(err, &e) {
		t.Fatal("a non-envelope answer must not pose as an *fx.Error")
	}
}

// flaky answers 503 with Retry-After 0 to the first n requests of each
// idempotency key (or of each method when there is none), then 201, and
// records the keys it saw.
type flaky struct {
	mu    sync.Mutex
	n     int
	seen  map[string]int
	keys  []string
	calls atomic.Int64
}

func (f *flaky) app() *fx.App {
	app := quietApp()
	h := func(c *fx.Ctx) error {
		f.calls.Add(1)
		key := string(c.RequestCtx().Request.Header.Peek("Idempotency-Key"))
		f.mu.Lock()
		f.keys = append(f.keys, key)
		f.seen[c.Method()+key]++
		k := f.seen[c.Method()+key]
		f.mu.Unlock()
		if k <= f.n {
			c.SetHeader("Retry-After", "0")
			return fx.NewCatalogError(fx.ErrorCodes.ServiceUnavailable, "draining")
		}
		return c.JSON(201, map[string]string{"ok": "yes"})
	}
	app.Get("/x", h)
	app.Post("/x", h)
	return app
}

func TestRetriesOnlyWhenSafe(t *testing.T) {
	t.Parallel()
	transports(t, func(t *testing.T, cfg Config) {
		f := &flaky{n: 2, seen: map[string]int{}}
		cfg.BaseURL = serve(t, f.app())
		c := newClient(t, fast(cfg))

		// GET is idempotent: retried until it succeeds.
		resp, err := c.Do(context.Background(), &Request{Method: "GET", Path: "/x"})
		if err != nil || resp.Attempts != 3 || resp.Status != 201 {
			t.Fatalf("GET: %v %+v", err, resp)
		}

		// POST with the generated key: retried, the same key every time.
		f.keys = nil
		resp, err = c.Do(context.Background(), &Request{Method: "POST", Path: "/x", Body: []byte(`{}`)})
		if err != nil || resp.Attempts != 3 {
			t.Fatalf("POST with key: %v %+v", err, resp)
		}
		if len(f.keys) != 3 || f.keys[0] == "" || f.keys[0] != f.keys[1] || f.keys[1] != f.keys[2] {
			t.Fatalf("keys sent = %q, want one key three times", f.keys)
		}

		// POST without a key: never retried; the 503 comes back typed.
		noKey := cfg
		noKey.NoIdempotencyKey = true
		c2 := newClient(t, fast(noKey))
		before := f.calls.Load()
		_, err = c2.Do(context.Background(), &Request{Method: "POST", Path: "/x"})
		var e *fx.Error
		if !errors.As(err, &e) || e.Code != fx.ErrorCodes.ServiceUnavailable || e.Status != 503 {
			t.Fatalf("POST without key: %v", err)
		}
		if got := f.calls.Load() - before; got != 1 {
			t.Fatalf("POST without key was sent %d times, want 1", got)
		}
	})
}

func TestNoRetryOnDeterministicError(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	app := countedApp("/x", &calls, func(c *fx.Ctx) error { return fx.NewError(409, "APP_CONFLICT", "conflict") })
	c := newClient(t, fast(Config{BaseURL: serve(t, app)}))
	err := c.Call(context.Background(), "GET", "/x", nil, nil)
	var e *fx.Error
	if !errors.As(err, &e) || e.Code != "APP_CONFLICT" || calls.Load() != 1 {
		t.Fatalf("err %v after %d calls", err, calls.Load())
	}
}

func TestHonoursRetryAfterAndDeadline(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	app := countedApp("/x", &calls, func(c *fx.Ctx) error {
		if calls.Load() == 1 {
			c.SetHeader("Retry-After", "1")
			return fx.NewCatalogError(fx.ErrorCodes.RateLimited, "slow down")
		}
		return c.JSON(200, "ok")
	})
	c := newClient(t, fast(Config{BaseURL: serve(t, app)}))
	waits := skipWaits(c)
	if err := c.Call(context.Background(), "GET", "/x", nil, nil); err != nil {
		t.Fatal(err)
	}
	if w := waits(); len(w) != 1 || w[0] < time.Second {
		t.Fatalf("waits before the retries: %v, want one of Retry-After's 1 s at least", w)
	}

	// A hint longer than what is left of the context: the call ends at
	// once with the typed 429 instead of sleeping past its deadline.
	calls.Store(0)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.Call(ctx, "GET", "/x", nil, nil)
	var e *fx.Error
	if !errors.As(err, &e) || e.Code != fx.ErrorCodes.RateLimited {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > 200*time.Millisecond {
		t.Fatalf("took %v: waited for a hint that outlives the deadline", el)
	}
}

func TestBudgetBoundsRetries(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	app := countedApp("/x", &calls, func(c *fx.Ctx) error { return fx.NewCatalogError(fx.ErrorCodes.ServiceUnavailable, "down") })
	budget := NewBudget(BudgetConfig{MinRetries: 3, Ratio: 0.01, Window: time.Hour})
	c := newClient(t, fast(Config{BaseURL: serve(t, app), Budget: budget}))
	var exhausted int
	for range 10 {
		err := c.Call(context.Background(), "GET", "/x", nil, nil)
		if errors.Is(err, ErrBudgetExhausted) {
			exhausted++
			var e *fx.Error
			if !errors.As(err, &e) || e.Code != fx.ErrorCodes.ServiceUnavailable {
				t.Fatalf("the last answer must stay reachable: %v", err)
			}
		}
	}
	// 10 calls, 3 + 0.01·10 = 3 retries allowed: 13 requests, not 40.
	if got := calls.Load(); got != 13 {
		t.Fatalf("server saw %d requests, want 13 (10 calls + 3 retries)", got)
	}
	if exhausted == 0 {
		t.Fatal("no call reported ErrBudgetExhausted")
	}
}

// rawServer is a TCP server that reads one request per connection and
// hands the connection to answer.
type rawSrv struct {
	url   string
	count atomic.Int64
}

func rawServer(t *testing.T, answer func(net.Conn, *http.Request)) *rawSrv {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawSrv{url: "http://" + ln.Addr().String()}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				body, _ := io.ReadAll(req.Body)
				req.Body = io.NopCloser(bytes.NewReader(body)) // answer may read it again
				s.count.Add(1)
				answer(conn, req)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return s
}

func TestCutConnectionRetriedOnlyWhenSafe(t *testing.T) {
	t.Parallel()
	transports(t, func(t *testing.T, cfg Config) {
		// The server reads the whole request, then drops the connection
		// without answering: the request may have been acted on.
		srv := rawServer(t, func(net.Conn, *http.Request) {})
		cfg.BaseURL = srv.url
		cfg.NoIdempotencyKey = true
		c := newClient(t, fast(cfg))
		_, err := c.Do(context.Background(), &Request{Method: "POST", Path: "/orders", Body: []byte("{}")})
		var te *TransportError
		if !errors.As(err, &te) || !te.Sent {
			t.Fatalf("err = %v, want a TransportError that may have been sent", err)
		}
		if n := srv.count.Load(); n != 1 {
			t.Fatalf("POST without a key sent %d times after a cut, want 1", n)
		}
		srv.count.Store(0)
		_, err = c.Do(context.Background(), &Request{Method: "POST", Path: "/orders", Body: []byte("{}"), IdempotencyKey: "k1"})
		if err == nil || srv.count.Load() != int64(DefaultMaxAttempts) {
			t.Fatalf("POST with a key: %v after %d attempts, want %d", err, srv.count.Load(), DefaultMaxAttempts)
		}
	})
}

func TestRefusedConnectionIsRetriedEvenForPOST(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: every dial is refused
	var dials atomic.Int64
	fc := &fasthttp.Client{Dial: func(a string) (net.Conn, error) {
		dials.Add(1)
		return fasthttp.Dial(a)
	}}
	c := newClient(t, fast(Config{BaseURL: "http://" + addr, NoIdempotencyKey: true, FastClient: fc}))
	_, err = c.Do(context.Background(), &Request{Method: "POST", Path: "/"})
	var te *TransportError
	if !errors.As(err, &te) || te.Sent {
		t.Fatalf("err = %v, want a TransportError never sent", err)
	}
	// The request never left: retrying it is safe whatever its method.
	if n := dials.Load(); n != int64(DefaultMaxAttempts) {
		t.Fatalf("%d dials, want %d", n, DefaultMaxAttempts)
	}
}

func TestDecideTable(t *testing.T) {
	t.Parallel()
	sent := &TransportError{Sent: true, Err: io.ErrUnexpectedEOF}
	unsent := &TransportError{Sent: false, Err: &net.OpError{Op: "dial", Err: errors.New("refused")}}
	st := func(status int, code string) error {
		return &statusError{err: &fx.Error{Status: status, Code: code}, header: http.Header{}}
	}
	cases := []struct {
		name  string
		err   error
		safe  bool
		retry bool
	}{
		{"sent, unsafe", sent, false, false},
		{"sent, safe", sent, true, true},
		{"not sent, unsafe", unsent, false, true},
		{"503 safe", st(503, fx.ErrorCodes.ServiceUnavailable), true, true},
		{"503 unsafe", st(503, fx.ErrorCodes.ServiceUnavailable), false, false},
		{"429 safe", st(429, fx.ErrorCodes.RateLimited), true, true},
		{"504 safe", st(504, fx.ErrorCodes.Timeout), true, true},
		{"500 safe", st(500, fx.ErrorCodes.InternalError), true, false},
		{"422 safe", st(422, fx.ErrorCodes.ValidationError), true, false},
		{"409 app", st(409, "APP_CONFLICT"), true, false},
		{"409 in flight", st(409, fx.ErrorCodes.IdempotencyInFlight), true, true},
		{"other error", errors.New("x"), true, false},
		{"too large, safe", &TransportError{Sent: true, Err: ErrResponseTooLarge}, true, false},
		{"redirect loop, safe", &TransportError{Sent: true, Err: ErrTooManyRedirects}, true, false},
	}
	for _, tc := range cases {
		if _, got := (Retry{}).withDefaults().decide(tc.err, 1, tc.safe); got != tc.retry {
			t.Errorf("%s: retry = %v, want %v", tc.name, got, tc.retry)
		}
	}
	if _, got := (Retry{}).withDefaults().decide(sent, DefaultMaxAttempts, true); got {
		t.Error("retried past MaxAttempts")
	}
}

func TestServerHint(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {now.Add(7 * time.Second).Format(http.TimeFormat)}}, 7 * time.Second},
		{http.Header{"Retry-After": {"999999999"}}, time.Hour},
		{http.Header{"Retry-After": {"9300000000"}}, time.Hour},              // × 1e9 ns overflows int64
		{http.Header{"Retry-After": {"18446744074"}}, time.Hour},             // wraps round to 0.6 s
		{http.Header{"Retry-After": {"99999999999999999999999"}}, time.Hour}, // beyond uint64
		{http.Header{"Retry-After": {"+5"}}, 0},
		{http.Header{"Retry-After": {now.Add(200 * 365 * 24 * time.Hour).Format(http.TimeFormat)}}, time.Hour},
		{http.Header{"Ratelimit": {`"default";r=0;t=18446744074`}}, time.Hour},
		{http.Header{"Retry-After": {"-4"}}, 0},
		{http.Header{"Ratelimit": {`"default";r=0;t=12`}}, 12 * time.Second},
		{http.Header{"Ratelimit": {`"default";r=5;t=12`}}, 0},
		{http.Header{"Ratelimit": {`"a";r=3;t=1, "b";r=0;t=4`}}, 4 * time.Second},
		{http.Header{}, 0},
	}
	for _, tc := range cases {
		if got := serverHint(tc.h, now); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	t.Parallel()
	r := Retry{MaxAttempts: 100, BaseDelay: 10 * time.Millisecond, MaxDelay: 80 * time.Millisecond}
	err := &TransportError{Sent: false, Err: errors.New("x")}
	for attempt := 1; attempt < 20; attempt++ {
		ceiling := min(r.BaseDelay<<(attempt-1), r.MaxDelay)
		for range 50 {
			w, ok := r.decide(err, attempt, true)
			if !ok || w < 0 || w > ceiling {
				t.Fatalf("attempt %d: wait %v outside [0, %v]", attempt, w, ceiling)
			}
		}
	}
}

func TestNewIdempotencyKeyIsFresh(t *testing.T) {
	t.Parallel()
	a, b := NewIdempotencyKey(), NewIdempotencyKey()
	if a == b || len(a) != 32 || strings.Trim(a, "0123456789abcdef") != "" {
		t.Fatalf("keys %q %q", a, b)
	}
}

func TestResponseBodyIsBounded(t *testing.T) {
	t.Parallel()
	app := quietApp()
	big := strings.Repeat("x", 4096)
	app.Get("/big", func(c *fx.Ctx) error { return c.JSON(200, big) })
	base := serve(t, app)
	transports(t, func(t *testing.T, cfg Config) {
		cfg.BaseURL, cfg.MaxResponseBytes = base, 1024
		c := newClient(t, fast(cfg))
		err := c.Call(context.Background(), "GET", "/big", nil, nil)
		var te *TransportError
		if !errors.Is(err, ErrResponseTooLarge) || !errors.As(err, &te) {
			t.Fatalf("err = %v, want ErrResponseTooLarge in a TransportError", err)
		}
		cfg.MaxResponseBytes = 8192
		var out string
		if err := newClient(t, fast(cfg)).Call(context.Background(), "GET", "/big", nil, &out); err != nil || out != big {
			t.Fatalf("under the limit: %v (%d bytes)", err, len(out))
		}
	})
}
