package fx_test

import (
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/validate"
)

// traceSchema is a Body schema that records when validation runs and
// requires a non-empty "name".
type traceSchema struct{ trace *[]string }

func (s traceSchema) Validate(v any) validate.Result {
	*s.trace = append(*s.trace, "validate")
	m, _ := v.(map[string]any)
	if name, _ := m["name"].(string); name == "" {
		return validate.Result{Issues: []validate.Issue{{Path: []string{"name"}, Message: "secret-field-rule"}}}
	}
	return validate.Result{Value: v}
}

// mark records name before and after the rest of the chain.
func mark(trace *[]string, name string) fx.Middleware {
	return func(c *fx.Ctx, next fx.Next) error {
		*trace = append(*trace, name+">")
		err := next()
		*trace = append(*trace, "<"+name)
		return err
	}
}

// TestRouteMiddlewareOrder: App middleware, then the
// group's, then the route's own Middleware, then validation, then the
// handler; for App.Route and Group.Route alike. A route middleware that
// refuses is answered before the schema runs. The Middleware slice is
// copied at registration.
func TestRouteMiddlewareOrder(t *testing.T) {
	var trace []string
	app := fx.New()
	app.Use(mark(&trace, "app"))
	h := func(c *fx.Ctx) error {
		trace = append(trace, "handler")
		return c.String(200, "ok")
	}
	routeMW := []fx.Middleware{mark(&trace, "r1"), mark(&trace, "r2")}
	app.Route(fx.Route{Method: "POST", Path: "/root", Body: traceSchema{&trace}, Middleware: routeMW, Handler: h})
	g := app.Group("/g", mark(&trace, "group"))
	g.Route(fx.Route{Method: "POST", Path: "/x", Body: traceSchema{&trace}, Middleware: routeMW, Handler: h})
	routeMW[0] = nil // registration copied the slice: no effect

	for path, want := range map[string]string{
		"/root": "app> r1> r2> validate handler <r2 <r1 <app",
		"/g/x":  "app> group> r1> r2> validate handler <r2 <r1 <group <app",
	} {
		trace = nil
		if r := do(t, app, "POST", path, `{"name":"n"}`, "Content-Type", "application/json"); r.status != 200 {
			t.Fatalf("POST %s = %d %s", path, r.status, r.body)
		}
		if got := strings.Join(trace, " "); got != want {
			t.Errorf("POST %s ran %q, want %q", path, got, want)
		}
	}

	// A bad body reaches validation only after the route middleware.
	trace = nil
	r := do(t, app, "POST", "/g/x", `{}`, "Content-Type", "application/json")
	mustEnvelope(t, r, 422, fx.ErrorCodes.ValidationError)
	if got, want := strings.Join(trace, " "), "app> group> r1> r2> validate <r2 <r1 <group <app"; got != want {
		t.Errorf("422 ran %q, want %q", got, want)
	}
}

// TestRouteMiddlewareRefusesBeforeContract: a route middleware that
// refuses an anonymous caller answers its own 401; the schema never runs
// and nothing of it reaches the body (the 422 listing the schema's rules
// is what an unauthenticated caller got when the check wrapped the
// handler, inside the contract).
func TestRouteMiddlewareRefusesBeforeContract(t *testing.T) {
	var trace []string
	app := fx.New()
	auth := func(c *fx.Ctx, next fx.Next) error {
		if c.Header("Authorization") == "" {
			return fx.NewError(401, fx.ErrorCodes.Unauthenticated, "Authentication required")
		}
		return next()
	}
	app.Route(fx.Route{Method: "POST", Path: "/admin/users", Body: traceSchema{&trace},
		Middleware: []fx.Middleware{auth},
		Handler:    func(c *fx.Ctx) error { return c.String(201, "created") }})

	r := do(t, app, "POST", "/admin/users", `{}`, "Content-Type", "application/json")
	e := mustEnvelope(t, r, 401, fx.ErrorCodes.Unauthenticated)
	if len(e.Details) != 0 || strings.Contains(string(r.body), "secret-field-rule") || strings.Contains(string(r.body), "name") {
		t.Errorf("401 describes the schema: %s", r.body)
	}
	if len(trace) != 0 {
		t.Errorf("the schema ran for an anonymous caller: %q", trace)
	}
	r = do(t, app, "POST", "/admin/users", `{}`, "Content-Type", "application/json", "Authorization", "x")
	mustEnvelope(t, r, 422, fx.ErrorCodes.ValidationError)
}

// TestRouteMiddlewareNextGuard: the next() guard holds for route middleware, behind
// App and group middleware (the guard is the one counter of the chain): a
// second next() returns FX_NEXT_CALLED_MULTIPLE_TIMES and does not run the
// contract or the handler again.
func TestRouteMiddlewareNextGuard(t *testing.T) {
	var trace []string
	calls := 0
	var second error
	twice := func(c *fx.Ctx, next fx.Next) error {
		if err := next(); err != nil {
			return err
		}
		second = next()
		return second
	}
	app := quiet()
	app.Use(mark(&trace, "app"))
	app.Group("", mark(&trace, "group")).Route(fx.Route{Method: "POST", Path: "/twice",
		Body: traceSchema{&trace}, Middleware: []fx.Middleware{twice},
		Handler: func(c *fx.Ctx) error { calls++; return c.String(200, "ok") }})

	r := do(t, app, "POST", "/twice", `{"name":"n"}`, "Content-Type", "application/json")
	mustEnvelope(t, r, 500, fx.ErrorCodes.NextCalledMultipleTimes)
	var fe *fx.Error
	if !errors.As(second, &fe) || fe.Code != fx.ErrorCodes.NextCalledMultipleTimes {
		t.Errorf("second next() returned %v", second)
	}
	if calls != 1 || strings.Count(strings.Join(trace, " "), "validate") != 1 {
		t.Errorf("handler ran %d times, trace %q", calls, trace)
	}
}

// TestRouteMiddlewarePanic: a panic in route middleware reaches the error
// boundary like any other: outer middleware's next() returns it as a
// *PanicError, the hook sees the raw value, the client gets the production
// 500, and neither the contract nor the handler runs.
func TestRouteMiddlewarePanic(t *testing.T) {
	var trace []string
	boom := errors.New("boom")
	var outer error
	var hooked any
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		outer = next()
		return outer
	})
	app.OnError(func(c *fx.Ctx, err any) bool { hooked = err; return false })
	app.Route(fx.Route{Method: "POST", Path: "/p", Body: traceSchema{&trace},
		Middleware: []fx.Middleware{func(c *fx.Ctx, next fx.Next) error { panic(boom) }},
		Handler:    func(c *fx.Ctx) error { trace = append(trace, "handler"); return nil }})

	r := do(t, app, "POST", "/p", `{"name":"n"}`, "Content-Type", "application/json")
	e := mustEnvelope(t, r, 500, fx.ErrorCodes.InternalError)
	if e.Message != "Internal server error" {
		t.Errorf("message %q", e.Message)
	}
	var pe *fx.PanicError
	if !errors.As(outer, &pe) || pe.Value != boom {
		t.Errorf("outer next() returned %#v, want a *PanicError of the value", outer)
	}
	if hooked != boom {
		t.Errorf("hook saw %#v, want the panicked value", hooked)
	}
	if len(trace) != 0 {
		t.Errorf("ran after the panic: %q", trace)
	}
}

// TestRouteNilMiddlewareIsBootError: a nil Route.Middleware entry is a
// configuration error reported by Boot with the wording of App.Use's
// (naming the route and the position), on App.Route and Group.Route, and
// the failed boot answers 500 instead of panicking per request.
func TestRouteNilMiddlewareIsBootError(t *testing.T) {
	app := quiet()
	ok := func(c *fx.Ctx) error { return c.String(200, "ok") }
	pass := func(c *fx.Ctx, next fx.Next) error { return next() }
	app.Route(fx.Route{Method: "GET", Path: "/a", Middleware: []fx.Middleware{pass, nil}, Handler: ok})
	app.Group("/g").Route(fx.Route{Method: "POST", Path: "/b", Middleware: []fx.Middleware{nil}, Handler: ok})
	err := app.Boot()
	if err == nil {
		t.Fatal("Boot = nil, want the nil middleware reported")
	}
	for _, want := range []string{
		"Route GET /a: nil middleware at position 1",
		"Route POST /g/b: nil middleware at position 0",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Boot error lacks %q: %v", want, err)
		}
	}
	var fe *fx.Error
	if !errors.As(err, &fe) || fe.Code != fx.ErrorCodes.InternalError {
		t.Errorf("Boot error is not an FX_INTERNAL_ERROR *Error: %v", err)
	}
	mustEnvelope(t, do(t, app, "GET", "/a", ""), 500, fx.ErrorCodes.InternalError)
}

// TestRouteNilMiddlewareAndNilHandler: Boot reports both configuration
// errors of one route, not only the first.
func TestRouteNilMiddlewareAndNilHandler(t *testing.T) {
	app := quiet()
	app.Route(fx.Route{Method: "GET", Path: "/a", Middleware: []fx.Middleware{nil}})
	err := app.Boot()
	if err == nil || !strings.Contains(err.Error(), "nil middleware") || !strings.Contains(err.Error(), "has no handler") {
		t.Errorf("Boot = %v, want both the nil middleware and the missing handler", err)
	}
}

// ExampleApp_Route_middleware puts an authorization check on one route
// contract: it runs before validation, so a caller without the key learns
// nothing about the schema.
func ExampleApp_Route_middleware() {
	app := fx.New()
	requireKey := func(c *fx.Ctx, next fx.Next) error {
		if c.Header("X-API-Key") != "secret" {
			return fx.NewError(401, fx.ErrorCodes.Unauthenticated, "API key required")
		}
		return next()
	}
	app.Route(fx.Route{
		Method:     "POST",
		Path:       "/orders",
		Body:       validate.Object(validate.Fields{"item": validate.String().MinLen(1)}),
		Middleware: []fx.Middleware{requireKey},
		Handler:    func(c *fx.Ctx) error { return c.String(201, "created") },
	})

	for _, key := range []string{"", "secret"} {
		req := httptest.NewRequest("POST", "/orders", strings.NewReader(`{}`))
		req.Header.Set("X-API-Key", key)
		resp, _ := app.Test(req)
		b, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, string(b))
	}
	// Output:
	// 401 {"error":{"code":"FX_UNAUTHENTICATED","message":"API key required"}}
	// 422 {"error":{"code":"FX_VALIDATION_ERROR","message":"Request validation failed","details":{"issues":[{"location":"body","path":["item"],"message":"Required"}]}}}
}
