package middleware_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
	"github.com/fxhq/fx/validate"
)

// TestRouteMiddlewareAuthBeforeContract: RequireRoles on a route contract
// (Route.Middleware) runs before body validation. When the
// check wrapped the handler instead, it ran inside the contract: an
// anonymous caller sending a bad body got 422 with the schema's field
// names, rules and the request's shape, i.e. the contract leaked to anyone.
func TestRouteMiddlewareAuthBeforeContract(t *testing.T) {
	app := fx.New()
	app.Use(middleware.Auth(middleware.AuthConfig{Bearer: kittest.HSVerifier(), Optional: true}))
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
	post := func(body string, token jwttest.Claims) (int, string) {
		t.Helper()
		req := httptest.NewRequest("POST", "/admin/users", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != nil {
			req.Header.Set("Authorization", "Bearer "+kittest.Sign(token, nil))
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
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
