package idempotency_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest/jwtkit"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
	"github.com/fxhq/fx/nethttp"
)

// scopeCase is two callers that must never share a stored response: each
// is the request headers that authenticate it.
type scopeCase struct {
	name string
	a, b []string
}

// scopeCallers is an Auth that accepts two API keys configured without a
// Subject and JWTs of the kittest signer, and the pairs of callers the
// default scope must tell apart although none has a string subject.
func scopeCallers(t *testing.T) (middleware.AuthConfig, []scopeCase) {
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{
		"key-one-0123456789abcdef": {}, "key-two-0123456789abcdef": {},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := jwtkit.SignerFor(jwttest.HS256, []byte(nil), "")
	bearer := func(opts ...jwttest.TokenOption) []string {
		return []string{"Authorization", "Bearer " + s.Token(opts...)}
	}
	noSub := jwttest.Claims{"sub": nil}
	return middleware.AuthConfig{APIKeys: keys, Bearer: s.Verifier()}, []scopeCase{
		{"API keys without Subject", []string{"X-API-Key", "key-one-0123456789abcdef"}, []string{"X-API-Key", "key-two-0123456789abcdef"}},
		{"JWTs without sub", bearer(noSub, jwttest.Claims{"jti": "a"}), bearer(noSub, jwttest.Claims{"jti": "b"})},
		{"JWTs with numeric sub", bearer(jwttest.Claims{"sub": 1001}), bearer(jwttest.Claims{"sub": 1002})},
		{"numeric sub and no sub", bearer(jwttest.Claims{"sub": 1001}), bearer(noSub)},
	}
}

// scopedOrderApp is POST /orders under Auth(auth) and mw, answering 201
// with a body that names the run, so a replay shows whose run it is.
func scopedOrderApp(t *testing.T, auth middleware.AuthConfig, runs *atomic.Int64, mw fx.Middleware) *fx.App {
	t.Helper()
	app := quietApp()
	app.Use(middleware.Auth(auth), mw)
	app.Post("/orders", func(c *fx.Ctx) error {
		return c.JSON(201, map[string]int64{"run": runs.Add(1)})
	})
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	return app
}

// Principals without a string subject do not share one scope: caller B
// sending A's key and body runs the handler and gets its own response (no
// replay of A's, no 422 telling it A used the key); each caller's own
// retry is replayed. Through the App's handler and through nethttp.
func TestScopeWithoutStringSubject(t *testing.T) {
	auth, cases := scopeCallers(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var runs atomic.Int64
			app := scopedOrderApp(t, auth, &runs, idempotency.New(idempotency.Config{}))
			a := do(app, "POST", "/orders", "shared-key", "{}", tc.a...)
			b := do(app, "POST", "/orders", "shared-key", "{}", tc.b...)
			if a.status != 201 || b.status != 201 || b.replayed != "" || b.body == a.body {
				t.Fatalf("A: %+v\nB: %+v (B got A's answer)", a, b)
			}
			if r := do(app, "POST", "/orders", "shared-key", `{"other":1}`, tc.b...); r.status != 422 {
				t.Fatalf("B's key reused with another body: %+v, want 422", r)
			}
			for _, caller := range []struct {
				hdr   []string
				first result
			}{{tc.a, a}, {tc.b, b}} {
				if r := do(app, "POST", "/orders", "shared-key", "{}", caller.hdr...); r.replayed != "true" || r.body != caller.first.body {
					t.Fatalf("retry: %+v, want the replay of %+v", r, caller.first)
				}
			}
			if runs.Load() != 2 {
				t.Fatalf("handler ran %d times, want 2", runs.Load())
			}
		})
	}
	t.Run("nethttp", func(t *testing.T) {
		var runs atomic.Int64
		app := scopedOrderApp(t, auth, &runs, idempotency.New(idempotency.Config{}))
		srv := httptest.NewServer(nethttp.Handler(app))
		defer srv.Close()
		send := func(hdr []string) (string, string) {
			req, _ := http.NewRequest("POST", srv.URL+"/orders", strings.NewReader("{}"))
			req.Header.Set(idempotency.HeaderKey, "shared-key")
			req.Header.Set(hdr[0], hdr[1])
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return string(body), resp.Header.Get(idempotency.HeaderReplayed)
		}
		for _, tc := range cases {
			a, _ := send(tc.a)
			b, replayed := send(tc.b)
			if b == a || replayed != "" {
				t.Fatalf("%s: B got %q (replayed %q), A got %q", tc.name, b, replayed, a)
			}
		}
	})
}

// Requests without a principal never share replays by default: their key
// is ignored (each runs the handler, nothing is replayed); ShareAnonymous
// scopes them by tenant, as the route then chooses.
func TestAnonymousCallersDoNotShare(t *testing.T) {
	var runs atomic.Int64
	app := orderApp(t, &runs, idempotency.New(idempotency.Config{Required: true}))
	for i := range 2 {
		if r := do(app, "POST", "/orders/a", "anon-key", "{}"); r.status != 201 || r.replayed != "" || runs.Load() != int64(i+1) {
			t.Fatalf("anonymous request %d: %+v, runs %d", i+1, r, runs.Load())
		}
	}
	shared := orderApp(t, &runs, idempotency.New(idempotency.Config{ShareAnonymous: true}))
	first := do(shared, "POST", "/orders/a", "anon-key", "{}")
	if r := do(shared, "POST", "/orders/a", "anon-key", "{}"); r.replayed != "true" || r.body != first.body {
		t.Fatalf("ShareAnonymous: %+v, first %+v", r, first)
	}
	// DefaultScope given as a Scope answers ErrNoScope: the same.
	explicit := orderApp(t, &runs, idempotency.New(idempotency.Config{Scope: idempotency.DefaultScope}))
	before := runs.Load()
	for range 2 {
		if r := do(explicit, "POST", "/orders/a", "anon-key", "{}"); r.status != 201 || r.replayed != "" {
			t.Fatalf("Scope: DefaultScope, anonymous: %+v", r)
		}
	}
	if runs.Load() != before+2 {
		t.Fatalf("Scope: DefaultScope, anonymous: %d runs, want 2", runs.Load()-before)
	}
}
