package ratelimit_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/middleware/ratelimit"
	"github.com/fxhq/fx/openapi"
)

// The RateLimit fields are declared exactly on the responses that carry
// them: on what the handler answers (success, its own errors, 422) and on
// the rate limit's own 429, never on the errors of a middleware before it
// (a 401 here) nor on what the server answers before any middleware runs.
// Each declared response of the route is provoked; the headers the
// document declares on its status are compared with the answer's, and
// the strict test client holds every answer to the same declaration.
func TestRateLimitHeadersDeclaredWhereSent(t *testing.T) {
	errGone := fx.NewError(404, "APP_GONE", "gone")
	errNoKey := fx.NewCatalogError(fx.ErrorCodes.Unauthenticated, "no key")
	needKey := fx.Declare(func(c *fx.Ctx, next fx.Next) error {
		if len(c.RequestCtx().Request.Header.Peek("X-Key")) == 0 {
			return errNoKey
		}
		return next()
	}, fx.Declaration{Errors: []*fx.Error{errNoKey}})
	app := fx.New(quiet)
	app.Use(needKey, ratelimit.New(ratelimit.Config{Limit: ratelimit.Limit{Requests: 3, Period: time.Hour}}))
	type in struct {
		N int `query:"n" validate:"max=5"`
	}
	type out struct{}
	fx.Op(app, "GET", "/items", func(c *fx.Ctx, in *in) (*out, error) {
		if in.N == 4 {
			return nil, errGone
		}
		return &out{}, nil
	}, func(r *fx.Route) { r.Errors = append(r.Errors, errGone) })

	doc, err := openapi.Generate(app, openapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	responses := doc["paths"].(map[string]any)["/items"].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)
	client := fxtest.New(t, app)
	for _, c := range []struct {
		status int
		req    *fxtest.Request
	}{
		{200, client.Get("/items").Header("X-Key", "k")},
		{404, client.Get("/items?n=4").Header("X-Key", "k")},
		{422, client.Get("/items?n=9").Header("X-Key", "k")},
		{429, client.Get("/items").Header("X-Key", "k")},
		{401, client.Get("/items")},
	} {
		resp := c.req.Do()
		if resp.Status != c.status {
			t.Fatalf("%s: %d, want %d: %s", c.req, resp.Status, c.status, resp.Body)
		}
		declared, _ := responses[strconv.Itoa(c.status)].(map[string]any)["headers"].(map[string]any)
		for _, name := range []string{"RateLimit", "RateLimit-Policy"} {
			_, isDeclared := declared[name]
			sent := resp.Header().Get(name) != ""
			if isDeclared != sent {
				t.Errorf("%d: %s declared: %v, sent: %v", c.status, name, isDeclared, sent)
			}
		}
	}
	for _, status := range []string{"413", "431"} { // answered before any middleware runs
		if r, ok := responses[status].(map[string]any); ok {
			if h, _ := r["headers"].(map[string]any); h["RateLimit"] != nil {
				t.Errorf("%s declares RateLimit", status)
			}
		}
	}
}
