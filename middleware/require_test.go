package middleware_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest/jwtkit"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
	"github.com/fxhq/fx/validate"
)

func authzApp(t *testing.T) *fx.App {
	t.Helper()
	app := fx.New()
	app.Use(middleware.Auth(middleware.AuthConfig{Bearer: jwtkit.HSVerifier(), APIKeys: apiKeys(t), Optional: true}))
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
		return map[string]string{"Authorization": "Bearer " + jwtkit.Sign(c, nil)}
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
		{"bad token is 401, not 403", "/admin", map[string]string{"Authorization": "Bearer " + jwtkit.Sign(jwttest.Claims{"roles": []string{"admin"}}, jwtkit.OtherKey)},
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
	admin := "Bearer " + jwtkit.Sign(jwttest.Claims{"roles": []string{"admin"}}, nil)
	reader := "Bearer " + jwtkit.Sign(jwttest.Claims{"permissions": []string{"reports:read"}}, nil)
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
				req := httptest.NewRequest("GET", "/admin", nil)
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

// TestRouteMiddlewareAuthBeforeContract: RequireRoles on a route contract
// (Route.Middleware) runs before body validation. When the
// check wrapped the handler instead, it ran inside the contract: an
// anonymous caller sending a bad body got 422 with the schema's field
// names, rules and the request's shape, i.e. the contract leaked to anyone.
func TestRouteMiddlewareAuthBeforeContract(t *testing.T) {
	app := fx.New()
	app.Use(middleware.Auth(middleware.AuthConfig{Bearer: jwtkit.HSVerifier(), Optional: true}))
	var ran int
	app.Route(fx.Route{
		Method: "POST",
		Path:   "/admin/users",
		Body: validate.Object(validate.Fields{
			"email":         validate.String().Pattern(`^[^@]+@[^@]+$`, "Must be an e-mail address"),
			"internal_tier": validate.Integer().Min(1),
		}),
		Middleware: []fx.Middleware{middleware.RequireRoles("admin")},
		Handler:    func(c *fx.Ctx) error { ran++; return c.String(201, "created") },
	})
	client := fxtest.New(t, app)
	post := func(body string, token jwttest.Claims) (int, string) {
		t.Helper()
		req := client.Post("/admin/users").Body("application/json", []byte(body))
		if token != nil {
			req.Bearer(jwtkit.Sign(token, nil))
		}
		r := req.Do()
		return r.Status, string(r.Body)
	}
	admin := jwttest.Claims{"roles": []string{"admin"}}
	user := jwttest.Claims{"roles": []string{"user"}}
	bad := `{"email":"nope"}`

	for _, c := range []struct {
		name, body string
		token      jwttest.Claims
		status     int
		code       string
	}{
		{"anonymous, bad body", bad, nil, 401, fx.ErrorCodes.Unauthenticated},
		{"anonymous, empty body", "", nil, 401, fx.ErrorCodes.Unauthenticated},
		{"wrong role, bad body", bad, user, 403, fx.ErrorCodes.Forbidden},
		{"right role, bad body", bad, admin, 422, fx.ErrorCodes.ValidationError},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := post(c.body, c.token)
			if status != c.status || !strings.Contains(body, `"code":"`+c.code+`"`) {
				t.Fatalf("%d %s, want %d %s", status, body, c.status, c.code)
			}
			leaks := strings.Contains(body, "email") || strings.Contains(body, "internal_tier") ||
				strings.Contains(body, "issues") || strings.Contains(body, "e-mail")
			if c.status != 422 && leaks {
				t.Fatalf("a refused caller learns the schema: %s", body)
			}
			if c.status == 422 && !(strings.Contains(body, `"path":["email"]`) && strings.Contains(body, `"path":["internal_tier"]`)) {
				t.Fatalf("422 lacks the issues: %s", body)
			}
		})
	}
	if status, body := post(`{"email":"a@b.c","internal_tier":2}`, admin); status != 201 || ran != 1 {
		t.Fatalf("admin, valid body: %d %s (handler ran %d times)", status, body, ran)
	}
}

// TestAuthenticatedSubject: the subject of the principal of the scheme
// asked for, else the 401 with the challenge of that scheme; a principal
// without a subject is refused, never keyed as "".
func TestAuthenticatedSubject(t *testing.T) {
	app := fx.New()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		if s := c.Header("X-Scheme"); s != "" {
			middleware.SetPrincipal(c, &middleware.Principal{Subject: c.Header("X-Sub"), Scheme: s})
		}
		return next()
	})
	app.Get("/:scheme", func(c *fx.Ctx) error {
		scheme := c.Param("scheme")
		if scheme == "any" {
			scheme = ""
		}
		sub, err := middleware.AuthenticatedSubject(c, scheme)
		if err != nil {
			return err
		}
		return c.JSON(200, map[string]string{"sub": sub})
	})
	for _, c := range []struct {
		target, scheme, sub string
		reason, challenge   string // "" reason: 200 with sub
	}{
		{"/any", "", "", middleware.ReasonMissingCredentials, `Bearer realm="api"`},
		{"/any", middleware.SchemeBearer, "alice", "", ""},
		{"/any", middleware.SchemeBearer, "", middleware.ReasonInvalidCredentials, `Bearer realm="api"`},
		{"/APIKey", middleware.SchemeAPIKey, "billing", "", ""},
		{"/APIKey", middleware.SchemeBearer, "alice", middleware.ReasonMissingCredentials, `APIKey realm="api", header="X-API-Key"`},
		{"/Bearer", middleware.SchemeAPIKey, "billing", middleware.ReasonMissingCredentials, `Bearer realm="api"`},
	} {
		r := do(t, app, "GET", c.target, map[string]string{"X-Scheme": c.scheme, "X-Sub": c.sub})
		if c.reason == "" {
			if r.status != 200 || r.body["sub"] != c.sub {
				t.Errorf("%s as %s %q: %d %s", c.target, c.scheme, c.sub, r.status, r.raw)
			}
			continue
		}
		expectError(t, r, 401, fx.ErrorCodes.Unauthenticated, c.reason)
		if got := r.header.Get("WWW-Authenticate"); got != c.challenge {
			t.Errorf("%s as %s %q: challenge %q, want %q", c.target, c.scheme, c.sub, got, c.challenge)
		}
	}
}
