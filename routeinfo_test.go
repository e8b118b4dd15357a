package fx_test

import (
	"slices"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/validate"
)

var errUserNotFound = fx.NewError(404, "USER_NOT_FOUND", "No such user")

// TestRoutesListsBootedRoutes: App.Routes lists every registration (plugin
// routes too), with its whole chain, merged documentation and declared
// errors, without the HEAD twin of a GET.
func TestRoutesListsBootedRoutes(t *testing.T) {
	app := fx.New()
	deny := fx.NewError(403, fx.CodeForbidden, "no")
	guard := fx.Declare(func(c *fx.Ctx, next fx.Next) error { return next() }, deny)
	app.Use(func(c *fx.Ctx, next fx.Next) error { return next() })
	api := app.Group("/api", guard).Tags("api")
	v1 := api.Group("/v1").Doc(fx.RouteDoc{Tags: []string{"v1", "api"}, Deprecated: true})
	body := validate.Object(validate.Fields{"name": validate.String()})
	v1.Route(fx.Route{
		Method: "POST", Path: "/users/:id/*rest", Body: body,
		Handler: func(c *fx.Ctx) error { return nil },
		Doc:     fx.RouteDoc{Summary: "Create", Tags: []string{"users", "v1"}},
		Errors:  []*fx.Error{errUserNotFound, nil, errUserNotFound},
	})
	app.Register(fx.Plugin{Name: "p", Setup: func(a *fx.App) error {
		a.Get("/health", func(c *fx.Ctx) error { return nil })
		return nil
	}})
	routes, err := app.Routes()
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 2 {
		t.Fatalf("got %d routes, want 2 (no HEAD twin): %+v", len(routes), routes)
	}
	var r fx.RouteInfo
	for _, x := range routes {
		if x.Method == "POST" {
			r = x
		}
	}
	if r.Path != "/api/v1/users/:id/*rest" || !slices.Equal(r.Params, []string{"id", "rest"}) || !r.CatchAll {
		t.Errorf("path %q params %v catchall %v", r.Path, r.Params, r.CatchAll)
	}
	if r.Body != body || len(r.Middleware) != 2 {
		t.Errorf("body %v, %d middleware (want app + group)", r.Body, len(r.Middleware))
	}
	if want := []string{"api", "v1", "users"}; !slices.Equal(r.Doc.Tags, want) || !r.Doc.Deprecated || r.Doc.Summary != "Create" {
		t.Errorf("doc %+v, want tags %v, deprecated, summary", r.Doc, want)
	}
	if len(r.Errors) != 2 || r.Errors[0] != errUserNotFound || r.Errors[1] != deny {
		t.Errorf("errors %v, want route's then middleware's, one per code", r.Errors)
	}
}

// TestDeclareIsPerClosure: two closures of one literal are two values,
// each with its own declaration (reflect's code pointer would merge them),
// and Declare returns the middleware itself.
func TestDeclareIsPerClosure(t *testing.T) {
	mk := func(e *fx.Error) fx.Middleware {
		return fx.Declare(func(c *fx.Ctx, next fx.Next) error { _ = e; return next() }, e)
	}
	a, b := fx.NewError(400, "A", "a"), fx.NewError(400, "B", "b")
	ma, mb := mk(a), mk(b)
	if got := fx.Declared(ma); len(got) != 1 || got[0] != a {
		t.Errorf("Declared(ma) = %v", got)
	}
	if got := fx.Declared(mb); len(got) != 1 || got[0] != b {
		t.Errorf("Declared(mb) = %v", got)
	}
	if fx.Declared(func(c *fx.Ctx, next fx.Next) error { return nil }) != nil || fx.Declare(nil) != nil {
		t.Error("undeclared middleware has declarations")
	}
}

// TestRoutesReportsBootError: a failed boot lists nothing.
func TestRoutesReportsBootError(t *testing.T) {
	app := fx.New()
	app.Route(fx.Route{Method: "GET", Path: "/x"})
	if routes, err := app.Routes(); err == nil || routes != nil {
		t.Fatalf("Routes() = %v, %v; want the boot error", routes, err)
	}
}
