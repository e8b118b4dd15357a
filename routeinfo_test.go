package fx_test

import (
	"reflect"
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
	deny := fx.NewError(403, fx.ErrorCodes.Forbidden, "no")
	guard := fx.Declare(func(c *fx.Ctx, next fx.Next) error { return next() }, fx.Declaration{Errors: []*fx.Error{deny}})
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
		return fx.Declare(func(c *fx.Ctx, next fx.Next) error { _ = e; return next() }, fx.Declaration{Errors: []*fx.Error{e}})
	}
	a, b := fx.NewError(400, "A", "a"), fx.NewError(400, "B", "b")
	ma, mb := mk(a), mk(b)
	if got := fx.DeclarationOf(ma).Errors; len(got) != 1 || got[0] != a {
		t.Errorf("DeclarationOf(ma).Errors = %v", got)
	}
	if got := fx.DeclarationOf(mb).Errors; len(got) != 1 || got[0] != b {
		t.Errorf("DeclarationOf(mb).Errors = %v", got)
	}
	if fx.DeclarationOf(func(c *fx.Ctx, next fx.Next) error { return nil }).Errors != nil || fx.Declare(nil, fx.Declaration{}) != nil {
		t.Error("undeclared middleware has declarations")
	}
}

// TestRoutesReportsBootError: a failed boot lists nothing.
func TestRoutesReportsBootError(t *testing.T) {
	app := quiet()
	app.Route(fx.Route{Method: "GET", Path: "/x"})
	if routes, err := app.Routes(); err == nil || routes != nil {
		t.Fatalf("Routes() = %v, %v; want the boot error", routes, err)
	}
}

// TestDeclaredResponsesIsTheContract: DeclaredResponses lists the
// successes (a typed operation's Out on its first status, a later
// Response replacing an earlier one of its status), then 422 when input
// is validated or bound, 413 when a body is read, 431 and 500 always
// (those three Generic), then the route's and its middleware's errors, one per status
// and code, an error status displacing a success of the same status and an
// out-of-range status counted as 500.
func TestDeclaredResponsesIsTheContract(t *testing.T) {
	type order struct {
		ID string `json:"id"`
	}
	type in struct {
		Body struct {
			Qty int `json:"qty"`
		}
	}
	conflict := fx.NewError(409, "APP_CONFLICT", "taken")
	weird := fx.NewError(302, "APP_WEIRD", "not an error status")
	guard := fx.Declare(func(c *fx.Ctx, next fx.Next) error { return next() }, fx.Declaration{Errors: []*fx.Error{fx.NewError(401, fx.ErrorCodes.Unauthenticated, "no"), conflict}})
	app := fx.New()
	app.Use(guard)
	fx.Op(app, "POST", "/orders", func(c *fx.Ctx, _ *in) (*order, error) { return &order{}, nil },
		func(r *fx.Route) {
			r.Responses = []fx.ResponseDoc{{Status: 201}, {Status: 202, Body: "x"}, {Status: 202}, {Status: 409, Body: order{}}}
			r.Errors = []*fx.Error{conflict, weird}
		})
	app.Get("/plain", func(c *fx.Ctx) error { return nil })
	routes, err := app.Routes()
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Status  int
		Code    string
		Body    reflect.Type
		Generic bool
	}
	rows := func(r fx.RouteInfo) []row {
		var out []row
		for _, d := range r.DeclaredResponses() {
			out = append(out, row{d.Status, d.Code, d.BodyType, d.Generic})
		}
		return out
	}
	want := []row{
		{201, "", reflect.TypeFor[order](), false},
		{202, "", nil, false},
		{422, fx.ErrorCodes.ValidationError, nil, false},
		{413, fx.ErrorCodes.PayloadTooLarge, nil, true},
		{431, fx.ErrorCodes.HeadersTooLarge, nil, true},
		{500, fx.ErrorCodes.InternalError, nil, true},
		{409, "APP_CONFLICT", nil, false},
		{500, "APP_WEIRD", nil, false},
		{401, fx.ErrorCodes.Unauthenticated, nil, false},
	}
	if got := rows(routes[0]); !slices.Equal(got, want) {
		t.Errorf("POST /orders:\n got %v\nwant %v", got, want)
	}
	want = []row{{200, "", nil, false}, {431, fx.ErrorCodes.HeadersTooLarge, nil, true}, {500, fx.ErrorCodes.InternalError, nil, true}, {401, fx.ErrorCodes.Unauthenticated, nil, false}, {409, "APP_CONFLICT", nil, false}}
	if got := rows(routes[1]); !slices.Equal(got, want) {
		t.Errorf("GET /plain:\n got %v\nwant %v", got, want)
	}
}

// TestDeclaredResponsesOnlyReachable422: a typed operation documents 422
// only when binding its input can fail — not for a plain string path
// parameter — and a middleware's declaration applies only to the methods
// it names (Declaration.Methods).
func TestDeclaredResponsesOnlyReachable422(t *testing.T) {
	type plain struct {
		Name string `path:"name"`
	}
	type tagged struct {
		Name string `path:"name" pattern:"^[a-z]+$"`
	}
	type number struct {
		ID int `path:"id"`
	}
	type optionalQuery struct {
		Name string   `path:"name"`
		Tags []string `query:"tag"`
	}
	type requiredHeader struct {
		Key string `header:"X-Key,required"`
	}
	postOnly := fx.Declare(func(c *fx.Ctx, next fx.Next) error { return next() }, fx.Declaration{
		Methods: []string{"POST"},
		Errors:  []*fx.Error{fx.NewError(409, "APP_BUSY", "busy")},
	})
	app := fx.New()
	out := func(c *fx.Ctx, _ *plain) (*struct{}, error) { return &struct{}{}, nil }
	g := app.Group("", postOnly)
	fx.Op(g, "GET", "/plain/:name", out)
	fx.Op(g, "GET", "/tagged/:name", func(c *fx.Ctx, _ *tagged) (*struct{}, error) { return &struct{}{}, nil })
	fx.Op(g, "GET", "/number/:id", func(c *fx.Ctx, _ *number) (*struct{}, error) { return &struct{}{}, nil })
	fx.Op(g, "GET", "/query/:name", func(c *fx.Ctx, _ *optionalQuery) (*struct{}, error) { return &struct{}{}, nil })
	fx.Op(g, "GET", "/header", func(c *fx.Ctx, _ *requiredHeader) (*struct{}, error) { return &struct{}{}, nil })
	fx.Op(g, "POST", "/plain/:name", out)
	routes, err := app.Routes()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{ // route → documents 422
		"GET /plain/:name": false, "GET /tagged/:name": true, "GET /number/:id": true,
		"GET /query/:name": false, "GET /header": true, "POST /plain/:name": false,
	}
	for _, r := range routes {
		has422, has409 := false, false
		for _, d := range r.DeclaredResponses() {
			has422 = has422 || d.Status == 422
			has409 = has409 || d.Code == "APP_BUSY"
		}
		key := r.Method + " " + r.Path
		if has422 != want[key] {
			t.Errorf("%s: 422 documented %v, want %v", key, has422, want[key])
		}
		if has409 != (r.Method == "POST") {
			t.Errorf("%s: APP_BUSY documented %v; the middleware declares it for POST only", key, has409)
		}
	}
}
