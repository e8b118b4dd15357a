package middleware_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
)

func authzApp(t *testing.T) *fx.App {
	t.Helper()
	app := fx.New()
	app.Use(middleware.Auth(middleware.AuthConfig{Bearer: kittest.HSVerifier(), APIKeys: apiKeys(t), Optional: true}))
	app.Get("/public", whoami)
	guard(app, "/admin", whoami, middleware.RequireRoles("admin"))
	guard(app, "/ops", whoami, middleware.RequireRoles("admin", "ops"))
	guard(app, "/reports", whoami, middleware.RequirePermissions("reports:read"))
	guard(app, "/signed-in", whoami, middleware.RequireRoles())
	return app
}

// guard registers GET path with h behind mw: the single-route pattern.
func guard(app *fx.App, path string, h fx.Handler, mw ...fx.Middleware) {
	app.Route(fx.Route{Method: "GET", Path: path, Middleware: mw, Handler: h})
}

func TestRequireRolesAndPermissions(t *testing.T) {
	app := authzApp(t)
	tok := func(c jwttest.Claims) map[string]string {
		return map[string]string{"Authorization": "Bearer " + kittest.Sign(c, nil)}
	}
	admin := tok(jwttest.Claims{"roles": []string{"admin"}})
	adminOps := tok(jwttest.Claims{"roles": []string{"ops", "admin"}})
	reader := tok(jwttest.Claims{"permissions": []string{"reports:read"}})
	nobody := tok(nil)
	adminKeyH := map[string]string{"X-API-Key": adminKey}
	readerKeyH := map[string]string{"X-API-Key": readerKey}

	for _, c := range []struct {
		name, path string
		headers    map[string]string
		status     int
		reason     string
		scope      bool // expect the insufficient_scope challenge
	}{
		{"anonymous on a public route", "/public", nil, 200, "", false},
		{"admin token", "/admin", admin, 200, "", false},
		{"admin API key", "/admin", adminKeyH, 200, "", false},
		{"all roles", "/ops", adminOps, 200, "", false},
		{"permission", "/reports", reader, 200, "", false},
		{"permission via API key", "/reports", readerKeyH, 200, "", false},
		{"any principal", "/signed-in", nobody, 200, "", false},

		{"anonymous needs a role", "/admin", nil, 401, "missing_credentials", false},
		{"anonymous needs a permission", "/reports", nil, 401, "missing_credentials", false},
		{"anonymous needs a principal", "/signed-in", nil, 401, "missing_credentials", false},
		{"token lacks the role", "/admin", reader, 403, "missing_role", true},
		{"token lacks one of two roles", "/ops", admin, 403, "missing_role", true},
		{"token lacks the permission", "/reports", admin, 403, "missing_permission", true},
		{"API key lacks the role", "/admin", readerKeyH, 403, "missing_role", false},
		{"API key lacks the permission", "/reports", adminKeyH, 403, "missing_permission", false},
		{"bad token is 401, not 403", "/admin", map[string]string{"Authorization": "Bearer " + kittest.Sign(jwttest.Claims{"roles": []string{"admin"}}, kittest.OtherKey)},
			401, "invalid_credentials", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, app, "GET", c.path, c.headers)
			if c.reason == "" {
				if r.status != 200 {
					t.Fatalf("%d %s", r.status, r.raw)
				}
				return
			}
			code := fx.ErrorCodes.Forbidden
			if c.status == 401 {
				code = fx.ErrorCodes.Unauthenticated
			}
			expectError(t, r, c.status, code, c.reason)
			ch := strings.Join(r.header.Values("WWW-Authenticate"), "\n")
			if c.status == 401 && !strings.Contains(ch, `realm="api"`) {
				t.Fatalf("401 challenge %q", ch)
			}
			if got := strings.Contains(ch, `error="insufficient_scope"`); got != c.scope {
				t.Fatalf("insufficient_scope challenge: %v, want %v (%q)", got, c.scope, ch)
			}
			if strings.Contains(r.msg, "admin") || strings.Contains(r.msg, "reports") {
				t.Fatalf("403 message lists the requirement: %q", r.msg)
			}
		})
	}
}

// TestRequireWithoutAuth: RequireRoles with no Auth before it is a 401
// with a default challenge, never a 403 or a panic.
func TestRequireWithoutAuth(t *testing.T) {
	app := fx.New()
	app.Use(middleware.RequireRoles("admin"))
	app.Get("/admin", whoami)
	r := do(t, app, "GET", "/admin", map[string]string{"Authorization": "Bearer whatever"})
	expectError(t, r, 401, fx.ErrorCodes.Unauthenticated, "missing_credentials")
	if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="api"` {
		t.Fatalf("challenge %q", got)
	}
}

func TestSetPrincipal(t *testing.T) {
	app := fx.New()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		if c.Header("X-Session") == "s1" {
			middleware.SetPrincipal(c, &middleware.Principal{Subject: "sess", Roles: []string{"admin"}})
		}
		return next()
	})
	guard(app, "/admin", whoami, middleware.RequireRoles("admin"))
	if r := do(t, app, "GET", "/admin", map[string]string{"X-Session": "s1"}); r.status != 200 || r.body["sub"] != "sess" {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	expectError(t, do(t, app, "GET", "/admin", nil), 401, fx.ErrorCodes.Unauthenticated, "missing_credentials")
}

func TestPrincipalNilSafe(t *testing.T) {
	var p *middleware.Principal
	if p.HasRole("x") || p.HasPermission("x") {
		t.Fatal("nil principal has something")
	}
	if _, ok := p.Claim("sub"); ok {
		t.Fatal("nil principal has a claim")
	}
	q := &middleware.Principal{Roles: []string{"a"}, Permissions: []string{"p"}, Claims: map[string]any{"sub": "s"}}
	if !q.HasRole("a") || q.HasRole("A") || !q.HasPermission("p") {
		t.Fatal("HasRole/HasPermission")
	}
	if v, ok := q.Claim("sub"); !ok || v != "s" {
		t.Fatal("Claim")
	}
}

// TestRequireConcurrent runs guarded routes from many goroutines (run
// with -race): the principal and the pooled per-request state of one
// request must never leak into another's authorization decision.
func TestRequireConcurrent(t *testing.T) {
	app := authzApp(t)
	admin := "Bearer " + kittest.Sign(jwttest.Claims{"roles": []string{"admin"}}, nil)
	reader := "Bearer " + kittest.Sign(jwttest.Claims{"permissions": []string{"reports:read"}}, nil)
	errs := make(chan string, 64)
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 20 {
				tok, want := admin, 200
				if (g+i)%2 == 1 {
					tok, want = reader, 403
				}
				req := newReq("/admin")
				req.Header.Set("Authorization", tok)
				resp, err := app.Test(req)
				if err != nil {
					errs <- err.Error()
					return
				}
				resp.Body.Close()
				if resp.StatusCode != want {
					errs <- fmt.Sprintf("got %d, want %d", resp.StatusCode, want)
					return
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
