package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/valyala/fasthttp"
)

// result is one response as a client sees it.
type result struct {
	status                              int
	body, ct, loc, replayed, retryAfter string
	code, reason                        string
}

// do serves one request through app's handler. hdr are name, value pairs.
func do(app *fx.App, method, path, key, body string, hdr ...string) result {
	var rc fasthttp.RequestCtx
	rc.Request.Header.SetMethod(method)
	rc.Request.SetRequestURI(path)
	if key != "" {
		rc.Request.Header.Set(idempotency.HeaderKey, key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		rc.Request.Header.Add(hdr[i], hdr[i+1])
	}
	rc.Request.SetBodyString(body)
	app.Handler()(&rc)
	r := result{
		status:     rc.Response.StatusCode(),
		body:       string(rc.Response.Body()),
		ct:         string(rc.Response.Header.ContentType()),
		loc:        string(rc.Response.Header.Peek("Location")),
		replayed:   string(rc.Response.Header.Peek(idempotency.HeaderReplayed)),
		retryAfter: string(rc.Response.Header.Peek("Retry-After")),
	}
	r.code, r.reason = envelope(rc.Response.Body())
	return r
}

// envelope returns the code and details.reason of an error envelope ("" for
// any other body), decoded into an fx.Error.
func envelope(body []byte) (code, reason string) {
	var env struct{ Error fx.Error }
	if json.Unmarshal(body, &env) != nil {
		return "", ""
	}
	details, _ := env.Error.Details.(map[string]any)
	reason, _ = details["reason"].(string)
	return env.Error.Code, reason
}

func quietApp() *fx.App { return fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)}) }

// orderApp is an app whose POST /orders/:shop creates an order per run
// (runs counts them) under mw.
func orderApp(t *testing.T, runs *atomic.Int64, mw ...fx.Middleware) *fx.App {
	t.Helper()
	app := quietApp()
	app.Use(mw...)
	app.Post("/orders/:shop", func(c *fx.Ctx) error {
		n := runs.Add(1)
		c.SetHeader("Location", fmt.Sprintf("/orders/%s/%d", c.Param("shop"), n))
		c.SetHeader("X-Other", "not stored")
		return c.JSON(201, map[string]any{"id": n, "body": string(c.Body())})
	})
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	return app
}

// A retry with the same key does not run the handler again: it gets the
// first response (status, body, Content-Type, Location) marked as a replay.
func TestRetryIsReplayed(t *testing.T) {
	var runs atomic.Int64
	app := orderApp(t, &runs, idempotency.New(idempotency.Config{ShareAnonymous: true}))
	first := do(app, "POST", "/orders/a", "k1", `{"qty":1}`)
	if first.status != 201 || first.replayed != "" || first.loc != "/orders/a/1" {
		t.Fatalf("first: %+v", first)
	}
	for range 3 {
		again := do(app, "POST", "/orders/a", "k1", `{"qty":1}`)
		if again.status != 201 || again.body != first.body || again.ct != first.ct || again.loc != first.loc || again.replayed != "true" {
			t.Fatalf("retry: %+v, first %+v", again, first)
		}
	}
	// The quoted sf-string form of the draft names the same key.
	if r := do(app, "POST", "/orders/a", `"k1"`, `{"qty":1}`); r.replayed != "true" || r.body != first.body {
		t.Fatalf(`quoted "k1": %+v`, r)
	}
	if runs.Load() != 1 {
		t.Fatalf("handler ran %d times, want 1", runs.Load())
	}
	// Another key runs the handler.
	if r := do(app, "POST", "/orders/a", "k2", `{"qty":1}`); r.status != 201 || r.replayed != "" || runs.Load() != 2 {
		t.Fatalf("new key: %+v, runs %d", r, runs.Load())
	}
}

// The same key with another method, path, query or body is 422
// FX_IDEMPOTENCY_KEY_REUSED; the handler does not run.
func TestKeyReusedForAnotherRequest(t *testing.T) {
	var runs atomic.Int64
	app := orderApp(t, &runs, idempotency.New(idempotency.Config{ShareAnonymous: true, Methods: []string{"POST", "PATCH"}}))
	if r := do(app, "POST", "/orders/a", "k", `{"qty":1}`); r.status != 201 {
		t.Fatalf("first: %+v", r)
	}
	for _, tc := range []struct{ path, body string }{
		{"/orders/a", `{"qty":2}`},
		{"/orders/a", `{"qty":1} `},
		{"/orders/b", `{"qty":1}`},
		{"/orders/a?dry=1", `{"qty":1}`},
	} {
		r := do(app, "POST", tc.path, "k", tc.body)
		if r.status != 422 || r.code != fx.ErrorCodes.IdempotencyKeyReused || r.reason != idempotency.ReasonKeyReused {
			t.Errorf("%s %s: %+v", tc.path, tc.body, r)
		}
	}
	if runs.Load() != 1 {
		t.Fatalf("handler ran %d times, want 1", runs.Load())
	}
}

// A duplicate while the first request runs is 409 FX_IDEMPOTENCY_IN_FLIGHT
// with Retry-After; once the first finishes, a retry gets the replay.
func TestDuplicateInFlight(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var runs atomic.Int64
	app := quietApp()
	app.Use(idempotency.New(idempotency.Config{ShareAnonymous: true, RetryAfter: 1500 * time.Millisecond}))
	app.Post("/pay", func(c *fx.Ctx) error {
		runs.Add(1)
		close(started)
		<-release
		return c.JSON(200, map[string]string{"paid": "yes"})
	})
	var wg sync.WaitGroup
	var first result
	wg.Go(func() { first = do(app, "POST", "/pay", "k", "{}") })
	<-started
	r := do(app, "POST", "/pay", "k", "{}")
	if r.status != 409 || r.code != fx.ErrorCodes.IdempotencyInFlight || r.reason != idempotency.ReasonInFlight || r.retryAfter != "2" {
		t.Fatalf("duplicate in flight: %+v", r)
	}
	close(release)
	wg.Wait()
	if r := do(app, "POST", "/pay", "k", "{}"); r.status != 200 || r.body != first.body || r.replayed != "true" {
		t.Fatalf("after: %+v (first %+v)", r, first)
	}
	if runs.Load() != 1 {
		t.Fatalf("handler ran %d times", runs.Load())
	}
}

// Required refuses a request without a key; without Required it runs
// every time. Other methods are never touched.
func TestRequiredAndMethods(t *testing.T) {
	var runs atomic.Int64
	req := orderApp(t, &runs, idempotency.New(idempotency.Config{ShareAnonymous: true, Required: true}))
	r := do(req, "POST", "/orders/a", "", "{}")
	if r.status != 400 || r.code != fx.ErrorCodes.IdempotencyKeyRequired || r.reason != idempotency.ReasonMissingKey || runs.Load() != 0 {
		t.Fatalf("no key, Required: %+v runs %d", r, runs.Load())
	}
	opt := orderApp(t, &runs, idempotency.New(idempotency.Config{ShareAnonymous: true}))
	do(opt, "POST", "/orders/a", "", "{}")
	do(opt, "POST", "/orders/a", "", "{}")
	if runs.Load() != 2 {
		t.Fatalf("no key, optional: ran %d times, want 2", runs.Load())
	}
	// PUT is not among the default methods: a key changes nothing.
	var puts atomic.Int64
	app := quietApp()
	app.Use(idempotency.New(idempotency.Config{ShareAnonymous: true, Required: true}))
	app.Put("/x", func(c *fx.Ctx) error { puts.Add(1); return c.String(200, "ok") })
	do(app, "PUT", "/x", "k", "")
	do(app, "PUT", "/x", "", "")
	if puts.Load() != 2 {
		t.Fatalf("PUT ran %d times, want 2", puts.Load())
	}
}

// Malformed keys are 400 FX_IDEMPOTENCY_KEY_REQUIRED, reason
// malformed_idempotency_key, and never reach the handler.
func TestMalformedKey(t *testing.T) {
	var runs atomic.Int64
	app := orderApp(t, &runs, idempotency.New(idempotency.Config{ShareAnonymous: true}))
	for _, key := range []string{
		strings.Repeat("a", 256), `"` + strings.Repeat("a", 256) + `"`,
		"a b", "caf\xc3\xa9", "a\x01", `""`, `"a`, `"a"b"`, `"a\n"`, `"a\x"`, `a\b`, "\x7f",
	} {
		r := do(app, "POST", "/orders/a", key, "{}")
		if r.status != 400 || r.code != fx.ErrorCodes.IdempotencyKeyRequired || r.reason != idempotency.ReasonMalformedKey {
			t.Errorf("key %q: %+v", key, r)
		}
	}
	// An empty field and two fields are malformed too.
	if r := do(app, "POST", "/orders/a", "", "{}", idempotency.HeaderKey, ""); r.reason != idempotency.ReasonMalformedKey {
		t.Errorf("empty field: %+v", r)
	}
	if r := do(app, "POST", "/orders/a", "k", "{}", idempotency.HeaderKey, "k2"); r.reason != idempotency.ReasonMalformedKey {
		t.Errorf("two fields: %+v", r)
	}
	if runs.Load() != 0 {
		t.Fatalf("handler ran %d times", runs.Load())
	}
	// The longest keys are accepted.
	for _, key := range []string{strings.Repeat("a", 255), `"` + strings.Repeat(`\"`, 255) + `"`} {
		if r := do(app, "POST", "/orders/a", key, "{}"); r.status != 201 {
			t.Errorf("key of 255: %+v", r)
		}
	}
}

func TestParseKey(t *testing.T) {
	for in, want := range map[string]string{
		"abc": "abc", `"abc"`: "abc", `"a b"`: "a b", `"a\"b\\c"`: `a"b\c`,
		"8e03978e-40d5-43e8-bc93-6894a57f9324": "8e03978e-40d5-43e8-bc93-6894a57f9324",
	} {
		if got, ok := idempotency.ParseKey([]byte(in)); !ok || got != want {
			t.Errorf("ParseKey(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// Keys are scoped by principal and tenant: two callers sending the same
// key and body each run the handler and each get their own response.
func TestScopedByPrincipalAndTenant(t *testing.T) {
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{
		"key-alice-0123456789": {Subject: "alice"}, "key-bob-0123456789abc": {Subject: "bob"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int64
	app := quietApp()
	app.Use(middleware.Auth(middleware.AuthConfig{APIKeys: keys}), middleware.Tenant(middleware.TenantConfig{}),
		idempotency.New(idempotency.Config{ShareAnonymous: true}))
	app.Post("/orders", func(c *fx.Ctx) error {
		p, _ := middleware.PrincipalFrom(c)
		tenant, _ := middleware.TenantFrom(c)
		return c.JSON(201, map[string]any{"owner": p.Subject, "tenant": tenant, "n": runs.Add(1)})
	})
	callers := [][]string{
		{"X-API-Key", "key-alice-0123456789"},
		{"X-API-Key", "key-bob-0123456789abc"},
		{"X-API-Key", "key-alice-0123456789", "X-Tenant-ID", "acme"},
		{"X-API-Key", "key-alice-0123456789", "X-Tenant-ID", "globex"},
	}
	bodies := map[string]bool{}
	for _, hdr := range callers {
		r := do(app, "POST", "/orders", "same-key", "{}", hdr...)
		if r.status != 201 || r.replayed != "" || bodies[r.body] {
			t.Fatalf("%v: %+v (another caller's response replayed?)", hdr, r)
		}
		bodies[r.body] = true
		again := do(app, "POST", "/orders", "same-key", "{}", hdr...)
		if again.body != r.body || again.replayed != "true" {
			t.Fatalf("%v retry: %+v, first %+v", hdr, again, r)
		}
	}
	if runs.Load() != int64(len(callers)) {
		t.Fatalf("handler ran %d times, want %d", runs.Load(), len(callers))
	}
}

// Which outcomes are stored: 2xx and deterministic 4xx are replayed
// (errors as their envelope); 5xx, 408, 425 and 429 release the key so a
// retry runs the handler again.
func TestStoredOutcomes(t *testing.T) {
	for _, tc := range []struct {
		status int
		err    *fx.Error
		stored bool
	}{
		{status: 200, stored: true},
		{status: 204, stored: true},
		{err: fx.NewError(409, "APP_CONFLICT", "taken"), stored: true},
		{err: fx.NewError(422, "APP_OUT_OF_STOCK", "none left", map[string]int{"left": 0}), stored: true},
		{err: fx.NewCatalogError(fx.ErrorCodes.NotFound, "no such shop"), stored: true},
		{status: 400, stored: true},
		{err: fx.NewError(500, "APP_DB", "db down")},
		{err: fx.NewCatalogError(fx.ErrorCodes.ServiceUnavailable, "busy")},
		{err: fx.NewCatalogError(fx.ErrorCodes.Timeout, "slow")},
		{err: fx.NewCatalogError(fx.ErrorCodes.RateLimited, "later")},
		{err: fx.NewCatalogError(fx.ErrorCodes.RequestTimeout, "later")},
		{status: 502},
	} {
		var runs atomic.Int64
		app := quietApp()
		app.Use(idempotency.New(idempotency.Config{ShareAnonymous: true}))
		app.Post("/op", func(c *fx.Ctx) error {
			runs.Add(1)
			if tc.err != nil {
				return tc.err
			}
			return c.String(tc.status, "done")
		})
		first := do(app, "POST", "/op", "k", "")
		second := do(app, "POST", "/op", "k", "")
		name := fmt.Sprintf("%d %v", tc.status, tc.err)
		if tc.stored {
			if runs.Load() != 1 || second.replayed != "true" || second.status != first.status || second.body != first.body || second.ct != first.ct {
				t.Errorf("%s: runs %d, first %+v, second %+v", name, runs.Load(), first, second)
			}
		} else if runs.Load() != 2 || second.replayed != "" || second.status != first.status {
			t.Errorf("%s: runs %d (want 2), second %+v", name, runs.Load(), second)
		}
	}
}

// failingStore is a Store whose backend is unreachable.
type failingStore struct{ idempotency.Store }

func (failingStore) Claim(context.Context, string, idempotency.Fingerprint, time.Duration) (uint64, idempotency.Record, error) {
	return 0, idempotency.Record{}, errors.New("connection refused")
}

// A store that fails answers 503 FX_SERVICE_UNAVAILABLE with Retry-After
// by default, and runs the handler with FailOpen.
func TestStoreFailure(t *testing.T) {
	var runs atomic.Int64
	closed := orderApp(t, &runs, idempotency.New(idempotency.Config{ShareAnonymous: true, Store: failingStore{}}))
	r := do(closed, "POST", "/orders/a", "k", "{}")
	if r.status != 503 || r.code != fx.ErrorCodes.ServiceUnavailable || r.reason != idempotency.ReasonUnavailable || r.retryAfter != "1" || runs.Load() != 0 {
		t.Fatalf("fail closed: %+v runs %d", r, runs.Load())
	}
	open := orderApp(t, &runs, idempotency.New(idempotency.Config{ShareAnonymous: true, Store: failingStore{}, FailOpen: true}))
	if r := do(open, "POST", "/orders/a", "k", "{}"); r.status != 201 || runs.Load() != 1 {
		t.Fatalf("fail open: %+v runs %d", r, runs.Load())
	}
}

// The middleware declares every error it can raise, for OpenAPI.
func TestDeclared(t *testing.T) {
	got := map[string]int{}
	for _, e := range fx.DeclarationOf(idempotency.New(idempotency.Config{ShareAnonymous: true})).Errors {
		got[e.Code] = e.Status
	}
	want := map[string]int{
		fx.ErrorCodes.IdempotencyKeyRequired: 400, fx.ErrorCodes.IdempotencyInFlight: 409,
		fx.ErrorCodes.IdempotencyKeyReused: 422, fx.ErrorCodes.ServiceUnavailable: 503,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("declared %v, want %v", got, want)
	}
}

// overrunApp is idempotency at App level and middleware.Timeout(50ms) on
// POST /orders, whose handler runs h after counting its run.
func overrunApp(t *testing.T, runs *atomic.Int64, h func(c *fx.Ctx, n int64) error) *fx.App {
	t.Helper()
	app := quietApp()
	app.Use(idempotency.New(idempotency.Config{ShareAnonymous: true}))
	app.Route(fx.Route{Method: "POST", Path: "/orders", Middleware: []fx.Middleware{middleware.Timeout(50 * time.Millisecond)},
		Handler: func(c *fx.Ctx) error { return h(c, runs.Add(1)) }})
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	return app
}

// A handler that commits after its route's Timeout (the client got 504)
// has done its work: a retry must not run it again. Its claim is held while
// it runs (a retry then gets 409 with Retry-After), and once it returned,
// the answer it wrote — not the 504 — is stored and replayed. A late
// error answer is stored as its envelope, as any error answer is.
func TestTimeoutOverrunRunsOnce(t *testing.T) {
	t.Parallel() // its own store and App; waits in real time
	var runs atomic.Int64
	started, release := make(chan struct{}), make(chan struct{})
	app := overrunApp(t, &runs, func(c *fx.Ctx, n int64) error {
		if n == 1 {
			close(started)
			<-release // ignores c.Context(): commits late
		}
		c.SetHeader("Location", "/orders/1")
		return c.JSON(201, map[string]int64{"order": n})
	})
	first := make(chan result, 1)
	go func() { first <- do(app, "POST", "/orders", "k", "{}") }()
	<-started
	time.Sleep(80 * time.Millisecond) // past the 50 ms deadline, the handler still running
	r := do(app, "POST", "/orders", "k", "{}")
	close(release)
	if r.status != 409 || r.code != fx.ErrorCodes.IdempotencyInFlight || r.retryAfter == "" {
		t.Fatalf("retry while the late handler runs: %+v, want 409 with Retry-After", r)
	}
	if r := <-first; r.status != 504 || r.code != fx.ErrorCodes.Timeout {
		t.Fatalf("first: %+v, want 504", r)
	}
	r = do(app, "POST", "/orders", "k", "{}")
	if r.status != 201 || r.replayed != "true" || r.body != `{"order":1}` || r.loc != "/orders/1" {
		t.Fatalf("retry after the 504: %+v, want the replay of the late 201", r)
	}
	if runs.Load() != 1 {
		t.Fatalf("handler ran %d times, want 1", runs.Load())
	}

	var errRuns atomic.Int64
	conflict := fx.NewError(409, "APP_SOLD_OUT", "sold out")
	app = overrunApp(t, &errRuns, func(c *fx.Ctx, _ int64) error {
		time.Sleep(100 * time.Millisecond)
		return conflict
	})
	if r := do(app, "POST", "/orders", "k", "{}"); r.status != 504 {
		t.Fatalf("late error, first: %+v", r)
	}
	if r := do(app, "POST", "/orders", "k", "{}"); r.status != 409 || r.code != "APP_SOLD_OUT" || r.replayed != "true" || errRuns.Load() != 1 {
		t.Fatalf("late error, retry: %+v after %d runs, want the replay of 409 APP_SOLD_OUT", r, errRuns.Load())
	}
}

// A handler that gave up at its deadline (it returned c.Context()'s
// error) did not do its work: the claim is released once it returned, and
// a retry runs it again.
func TestTimeoutHonouredReleases(t *testing.T) {
	var runs atomic.Int64
	app := overrunApp(t, &runs, func(c *fx.Ctx, n int64) error {
		if n == 1 {
			<-c.Context().Done()
			return c.Context().Err()
		}
		return c.JSON(201, map[string]int64{"order": n})
	})
	if r := do(app, "POST", "/orders", "k", "{}"); r.status != 504 {
		t.Fatalf("first: %+v", r)
	}
	if r := do(app, "POST", "/orders", "k", "{}"); r.status != 201 || r.replayed != "" || runs.Load() != 2 {
		t.Fatalf("retry: %+v after %d runs, want a second run", r, runs.Load())
	}
}
