package fx_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fxhq/fx"
)

// TestGroupPrefixAndMiddlewareOrder: a group's routes live under its
// prefix; App middleware runs first, then the group's, then a sub-group's;
// routes outside the group do not run the group's middleware.
func TestGroupPrefixAndMiddlewareOrder(t *testing.T) {
	app := fx.New()
	tag := func(name string) fx.Middleware {
		return func(c *fx.Ctx, next fx.Next) error {
			trail, _ := c.Value("trail").(string)
			c.SetValue("trail", trail+name+">")
			return next()
		}
	}
	show := func(c *fx.Ctx) error {
		trail, _ := c.Value("trail").(string)
		return c.String(200, trail+c.Param("id"))
	}
	app.Use(tag("app"))
	api := app.Group("/api", tag("api"))
	v1 := api.Group("/v1", tag("v1"))
	v1.Get("/users/:id", show)
	api.Get("/ping", show)
	app.Get("/plain", show)
	api.Use(tag("late")) // registered after the routes: still applies

	for path, want := range map[string]string{
		"/api/v1/users/7": "app>api>late>v1>7",
		"/api/ping":       "app>api>late>",
		"/plain":          "app>",
	} {
		if r := do(t, app, "GET", path, ""); r.status != 200 || string(r.body) != want {
			t.Errorf("GET %s = %d %q, want 200 %q", path, r.status, r.body, want)
		}
	}
	mustEnvelope(t, do(t, app, "GET", "/api/nope", ""), 404, fx.ErrorCodes.NotFound)
}

// TestGroupMiddlewareCanRefuse: group middleware that returns an *Error
// stops the chain with that envelope, and only for the group's routes.
func TestGroupMiddlewareCanRefuse(t *testing.T) {
	app := fx.New()
	admin := app.Group("/admin", func(c *fx.Ctx, next fx.Next) error {
		if c.Header("X-Role") != "admin" {
			return fx.NewError(403, fx.ErrorCodes.Forbidden, "Admins only")
		}
		return next()
	})
	admin.Get("/stats", func(c *fx.Ctx) error { return c.String(200, "ok") })
	app.Get("/public", func(c *fx.Ctx) error { return c.String(200, "ok") })

	if r := do(t, app, "GET", "/admin/stats", ""); r.status != 403 || string(r.body) != `{"error":{"code":"FX_FORBIDDEN","message":"Admins only"}}` {
		t.Errorf("GET /admin/stats = %d %s", r.status, r.body)
	}
	if r := do(t, app, "GET", "/admin/stats", "", "X-Role", "admin"); r.status != 200 {
		t.Errorf("admin GET /admin/stats = %d, want 200", r.status)
	}
	if r := do(t, app, "GET", "/public", ""); r.status != 200 {
		t.Errorf("GET /public = %d, want 200", r.status)
	}
}

// ExampleApp_Group puts middleware on some routes only.
func ExampleApp_Group() {
	app := fx.New()
	requireKey := func(c *fx.Ctx, next fx.Next) error {
		if c.Header("X-API-Key") == "" {
			return fx.NewError(401, fx.ErrorCodes.Unauthenticated, "API key required")
		}
		return next()
	}
	api := app.Group("/api", requireKey)
	api.Get("/orders", func(c *fx.Ctx) error { return c.JSON(200, []string{"o-1"}) })

	resp, _ := app.Test(httptest.NewRequest("GET", "/api/orders", nil))
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(b))
	// Output: 401 {"error":{"code":"FX_UNAUTHENTICATED","message":"API key required"}}
}

// A nil group middleware is a configuration error reported by Boot, as it
// is for App.Use, not a 500 on every request of the group; a nil in a
// parent group is reported once, though two sub-groups inherit it.
func TestGroupNilMiddlewareIsBootError(t *testing.T) {
	app := quiet()
	api := app.Group("/api", nil)
	ok := func(c *fx.Ctx) error { return c.String(200, "ok") }
	api.Group("/v1").Get("/a", ok)
	api.Group("/v2").Get("/b", ok)
	err := app.Boot()
	if err == nil {
		t.Fatal("Boot = nil, want the nil middleware reported")
	}
	if n := strings.Count(err.Error(), "nil middleware"); n != 1 {
		t.Errorf("Boot reported the nil middleware %d times: %v", n, err)
	}
	if !strings.Contains(err.Error(), `"/api"`) {
		t.Errorf("Boot error does not name the group: %v", err)
	}
}
