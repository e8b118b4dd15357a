package middleware_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/internal/kittest/jwtkit"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
	"github.com/fxhq/fx/nethttp"
)

// The API keys of the tests, examples and benchmarks (the JWT fixtures
// are kittest's).
var (
	adminKey  = "ak_live_0123456789abcdef0123"
	readerKey = "ak_live_fedcba9876543210fedc"
)

// quiet is an fx.Config whose logger drops everything, for tests that
// provoke 5xx on purpose.
var quiet = fx.Config{Logger: slog.New(slog.DiscardHandler)}

// signer is the HS256 Signer of the tests' tokens with key
// (jwtkit.JWTSecret when nil; jwtkit.SignerFor), so every token
// carries sub "user-1", iss, aud, iat and exp unless a claim says otherwise.
func signer(key []byte) *jwttest.Signer {
	return jwtkit.SignerFor(jwttest.HS256, key, "")
}

func apiKeys(t testing.TB) *middleware.APIKeys {
	t.Helper()
	ks, err := middleware.NewAPIKeys(map[string]middleware.Principal{
		adminKey:  {Subject: "svc-admin", Roles: []string{"admin"}, Tenant: "acme"},
		readerKey: {Subject: "svc-reader", Permissions: []string{"reports:read"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// whoami answers the principal and tenant the handler sees.
func whoami(c *fx.Ctx) error {
	out := map[string]any{}
	if p, ok := middleware.PrincipalFrom(c); ok {
		out["sub"] = p.Subject
		out["scheme"] = p.Scheme
		out["roles"] = p.Roles
		out["permissions"] = p.Permissions
		out["principal_tenant"] = p.Tenant
	}
	if id, ok := middleware.TenantFrom(c); ok {
		out["tenant"] = id
	}
	return c.JSON(200, out)
}

// result is one response, decoded.
type result struct {
	status    int
	header    http.Header
	raw       string
	body      map[string]any
	code, msg string
	reason    string
}

// rawResult is a response whose body need not be JSON.
type rawResult struct {
	status int
	header http.Header
	body   string
}

// send sends method target with header pairs (a "Host" pair sets the
// request's host) through app.Test.
func send(t *testing.T, app *fx.App, method, target string, header ...string) rawResult {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		if strings.EqualFold(header[i], "Host") {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := app.Test(req)
	if err != nil {
		t.Fatalf("app.Test: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawResult{resp.StatusCode, resp.Header, string(b)}
}

// do is send with the headers of a map, for a response whose body must
// be JSON: it is decoded, and an envelope's code, message and reason are
// picked out.
func do(t *testing.T, app *fx.App, method, target string, headers map[string]string) result {
	t.Helper()
	var pairs []string
	for k, v := range headers {
		pairs = append(pairs, k, v)
	}
	s := send(t, app, method, target, pairs...)
	r := result{status: s.status, header: s.header, raw: s.body}
	if err := json.Unmarshal([]byte(s.body), &r.body); err != nil {
		t.Fatalf("body is not JSON: %v: %q", err, s.body)
	}
	if e, ok := r.body["error"].(map[string]any); ok {
		r.code, _ = e["code"].(string)
		r.msg, _ = e["message"].(string)
		if d, ok := e["details"].(map[string]any); ok {
			r.reason, _ = d["reason"].(string)
		}
	}
	return r
}

// expectError checks an error response's status, code and reason, and that
// its content type is JSON.
func expectError(t *testing.T, r result, status int, code, reason string) {
	t.Helper()
	if r.status != status || r.code != code || r.reason != reason {
		t.Fatalf("got %d %s reason=%q (%s), want %d %s reason=%q", r.status, r.code, r.reason, r.raw, status, code, reason)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
}

// assertConfigPanic checks that build panics with a message that starts
// with prefix, names every problem in want and lists nothing else (one
// problem per line): how the constructors refuse a bad configuration.
func assertConfigPanic(t *testing.T, prefix string, cfg any, build func(), want []string) {
	t.Helper()
	msg := func() (msg string) {
		defer func() { msg, _ = recover().(string) }()
		build()
		return ""
	}()
	if !strings.HasPrefix(msg, prefix) {
		t.Fatalf("%+v: no panic (%q)", cfg, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("panic %q\nlacks %q", msg, w)
		}
	}
	if n := strings.Count(msg, "\n") + 1; n != len(want) {
		t.Errorf("panic lists %d problems, want %d: %q", n, len(want), msg)
	}
}

// expectPanic fails the test unless build panics: how a constructor
// refuses a configuration that is a programming error.
func expectPanic(t *testing.T, build func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	build()
}

// syncBuffer is the log sink the tests read while the App writes.
type syncBuffer = kittest.LogBuffer

// loggedApp is an App on cfg whose logger writes JSON records, debug level
// and up, into the returned buffer; it is shut down when the test ends.
func loggedApp(t *testing.T, cfg fx.Config) (*fx.App, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	cfg.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	app := fx.New(cfg)
	t.Cleanup(func() { app.Shutdown() })
	return app, logs
}

// doRepeated sends GET target with the header lines given (name, value,
// name, value, ...: a name may repeat) to app on both listeners — the
// fasthttp server (app.Test) and the standard library's through
// nethttp.Handler — and returns each decoded answer.
func doRepeated(t *testing.T, app *fx.App, target string, lines ...string) map[string]result {
	t.Helper()
	srv := httptest.NewServer(nethttp.Handler(app))
	defer srv.Close()
	out := map[string]result{}
	for _, listener := range []string{"fasthttp", "net/http"} {
		req := httptest.NewRequest("GET", target, nil)
		if listener == "net/http" {
			req, _ = http.NewRequest("GET", srv.URL+target, nil)
		}
		for i := 0; i+1 < len(lines); i += 2 {
			req.Header.Add(lines[i], lines[i+1])
		}
		var resp *http.Response
		var err error
		if listener == "fasthttp" {
			resp, err = app.Test(req)
		} else {
			resp, err = http.DefaultClient.Do(req)
		}
		if err != nil {
			t.Fatalf("%s: %v", listener, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r := result{status: resp.StatusCode, header: resp.Header, raw: string(b)}
		var env struct {
			Error struct {
				Code, Message string
				Details       struct{ Reason string }
			}
		}
		if json.Unmarshal(b, &env) == nil {
			r.code, r.msg, r.reason = env.Error.Code, env.Error.Message, env.Error.Details.Reason
		}
		out[listener] = r
	}
	return out
}

// declares reports whether mw declared status and code (fx.Declare).
func declares(mw fx.Middleware, status int, code string) bool {
	for _, e := range fx.DeclarationOf(mw).Errors {
		if e.Status == status && e.Code == code {
			return true
		}
	}
	return false
}

// containsAll reports whether s contains every one of parts.
func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
