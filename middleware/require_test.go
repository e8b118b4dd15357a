package middleware_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/middleware"
)

func authzApp(t *testing.T) *fx.App {
	t.Helper()
	app := fx.New()
	app.Use(middleware.Auth(middleware.AuthConfig{Bearer: hsVerifier(t), APIKeys: apiKeys(t), Optional: true}))
	app.Get("/public", whoami)
	app.Get("/admin", middleware.Wrap(whoami, middleware.RequireRoles("admin")))
	app.Get("/ops", middleware.Wrap(whoami, middleware.RequireRoles("admin", "ops")))
	app.Get("/reports", middleware.Wrap(whoami, middleware.RequirePermissions("reports:read")))
	app.Get("/signed-in", middleware.Wrap(whoami, middleware.RequireRoles()))
	return app
}

func TestRequireRolesAndPermissions(t *testing.T) {
	app := authzApp(t)
	tok := func(c fxtest.Claims) map[string]string {
		return map[string]string{"Authorization": "Bearer " + sign(t, c, nil)}
	}
	admin := tok(fxtest.Claims{"roles": []string{"admin"}})
	adminOps := tok(fxtest.Claims{"roles": []string{"ops", "admin"}})
	reader := tok(fxtest.Claims{"permissions": []string{"reports:read"}})
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
		{"bad token is 401, not 403", "/admin", map[string]string{"Authorization": "Bearer " + sign(t, fxtest.Claims{"roles": []string{"admin"}}, otherKey)},
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
	app.Get("/admin", middleware.Wrap(whoami, middleware.RequireRoles("admin")))
	if r := do(t, app, "GET", "/admin", map[string]string{"X-Session": "s1"}); r.status != 200 || r.body["sub"] != "sess" {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	expectError(t, do(t, app, "GET", "/admin", nil), 401, fx.ErrorCodes.Unauthenticated, "missing_credentials")
}

func TestWrapOrderAndNextGuard(t *testing.T) {
	var trace []string
	mark := func(name string) fx.Middleware {
		return func(c *fx.Ctx, next fx.Next) error {
			trace = append(trace, name+">")
			err := next()
			trace = append(trace, "<"+name)
			return err
		}
	}
	twice := func(c *fx.Ctx, next fx.Next) error {
		if err := next(); err != nil {
			return err
		}
		return next()
	}
	calls := 0
	app := fx.New(quiet)
	app.Get("/order", middleware.Wrap(func(c *fx.Ctx) error {
		trace = append(trace, "h")
		return c.String(200, "ok")
	}, mark("a"), mark("b")))
	app.Get("/twice", middleware.Wrap(func(c *fx.Ctx) error { calls++; return c.String(200, "ok") }, twice))
	app.Get("/panic", middleware.Wrap(func(c *fx.Ctx) error { panic("boom") }, mark("p")))

	if r, err := app.Test(newReq("/order")); err != nil || r.StatusCode != 200 {
		t.Fatalf("%v %v", r, err)
	}
	if got := strings.Join(trace, " "); got != "a> b> h <b <a" {
		t.Fatalf("order %q", got)
	}
	r := do(t, app, "GET", "/twice", nil)
	expectError(t, r, 500, fx.ErrorCodes.NextCalledMultipleTimes, "")
	if calls != 1 {
		t.Fatalf("handler ran %d times", calls)
	}
	expectError(t, do(t, app, "GET", "/panic", nil), 500, fx.ErrorCodes.InternalError, "")
	// The pooled state is clean after a panic.
	trace = nil
	if r, err := app.Test(newReq("/order")); err != nil || r.StatusCode != 200 || strings.Join(trace, " ") != "a> b> h <b <a" {
		t.Fatalf("after panic: %v %v %q", r, err, trace)
	}
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

// TestWrapConcurrent runs a wrapped route from many goroutines (run with
// -race): the pooled per-request state must not be shared.
func TestWrapConcurrent(t *testing.T) {
	app := authzApp(t)
	admin := "Bearer " + sign(t, fxtest.Claims{"roles": []string{"admin"}}, nil)
	reader := "Bearer " + sign(t, fxtest.Claims{"permissions": []string{"reports:read"}}, nil)
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
