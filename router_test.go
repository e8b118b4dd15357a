package fx_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/validate"
)

func TestRoutingParams(t *testing.T) {
	app := quiet()
	app.Get("/users/:id", func(c *fx.Ctx) error { return c.String(200, "user="+c.Param("id")) })
	app.Get("/users/:id/posts/:post", func(c *fx.Ctx) error {
		var kv []string
		c.Params(func(k, v string) bool { kv = append(kv, k+"="+v); return true })
		sort.Strings(kv)
		return c.String(200, strings.Join(kv, ",")+";missing="+c.Param("nope"))
	})
	app.Get("/files/*path", func(c *fx.Ctx) error { return c.String(200, "path="+c.Param("path")) })
	app.Get("/static", func(c *fx.Ctx) error { return c.String(200, "static") })

	for target, want := range map[string]string{
		"/users/42":               "user=42",
		"/users/J%C3%BCrgen":      "user=Jürgen",
		"/users/a+b%20c":          "user=a+b c",
		"/users/42?x=1":           "user=42",
		"/users/7/posts/9":        "id=7,post=9;missing=",
		"/files/a/b/c.txt":        "path=a/b/c.txt",
		"/files/dir%20name/x%20y": "path=dir name/x y",
		"/files/":                 "path=",
		"/static":                 "static",
		"/users/%E2%80%A8ls":      "user=\u2028ls",
		"/users/100%25":           "user=100%",
	} {
		r := do(t, app, "GET", target, "")
		if r.status != 200 || string(r.body) != want {
			t.Errorf("GET %s = %d %q, want %q", target, r.status, r.body, want)
		}
	}
	// Malformed percent-encoding is passed through as is.
	rc := serveRaw(app.Handler(), "GET", "/users/%ZZ-bad")
	if string(rc.Response.Body()) != "user=%ZZ-bad" {
		t.Errorf("bad escape: %q", rc.Response.Body())
	}
}

// Unknown method or path → 404 envelope; never 405, redirect or text.
func TestRoutingUnmatchedIs404ByDefault(t *testing.T) {
	app := quiet()
	app.Get("/a", func(c *fx.Ctx) error { return c.String(200, "a") })
	app.Get("/dir/", func(c *fx.Ctx) error { return c.String(200, "dir") })
	app.Post("/Case", func(c *fx.Ctx) error { return c.String(200, "case") })
	for _, tc := range []struct{ method, path string }{
		{"GET", "/a/"},    // trailing slash: no redirect
		{"GET", "/dir"},   // the other direction
		{"POST", "/case"}, // case variant: no fixed-path redirect
		{"PUT", "/a"},     // known path, other method: no 405
		{"OPTIONS", "/a"}, // no automatic OPTIONS
		{"CONNECT", "/a"},
		{"GET", "/"},
	} {
		r := do(t, app, tc.method, tc.path, "")
		mustEnvelope(t, r, 404, fx.ErrorCodes.NotFound)
		if r.header.Get("Location") != "" || r.header.Get("Allow") != "" {
			t.Errorf("%s %s: headers %v", tc.method, tc.path, r.header)
		}
	}
	// Dot segments are resolved before routing (the router and c.Path() see one path):
	// /x/../Case is /Case, for the router as for c.Path(); no redirect.
	if r := do(t, app, "POST", "/x/../Case", ""); r.status != 200 || string(r.body) != "case" {
		t.Errorf("POST /x/../Case = %d %q", r.status, r.body)
	}
}

func TestRoutingConfigSwitches(t *testing.T) {
	app := quiet(fx.Config{RedirectTrailingSlash: true, RedirectFixedPath: true, HandleOPTIONS: true})
	app.Get("/a", func(c *fx.Ctx) error { return c.String(200, "a") })
	app.Post("/a", func(c *fx.Ctx) error { return c.String(200, "a") })

	r := do(t, app, "GET", "/a/", "")
	if r.status < 300 || r.status > 399 || !strings.HasSuffix(r.header.Get("Location"), "/a") {
		t.Errorf("trailing slash: %d %v", r.status, r.header)
	}
	r = do(t, app, "GET", "/A", "")
	if r.status < 300 || r.status > 399 || !strings.HasSuffix(r.header.Get("Location"), "/a") {
		t.Errorf("fixed path: %d %v", r.status, r.header)
	}
	r = do(t, app, "OPTIONS", "/a", "")
	if r.status != 200 || !strings.Contains(r.header.Get("Allow"), "POST") {
		t.Errorf("OPTIONS: %d %v", r.status, r.header)
	}
	// An unregistered method is still a 404 envelope.
	mustEnvelope(t, do(t, app, "DELETE", "/a", ""), 404, fx.ErrorCodes.NotFound)
	mustEnvelope(t, do(t, app, "GET", "/b/", ""), 404, fx.ErrorCodes.NotFound)
}

// HEAD on a GET route runs the GET handler and sends no body; an explicit
// HEAD route wins.
func TestRoutingHead(t *testing.T) {
	var gets int
	app := quiet()
	app.Get("/a", func(c *fx.Ctx) error {
		gets++
		c.SetHeader("X-From", "get")
		return c.JSON(200, map[string]string{"big": strings.Repeat("x", 100)})
	})
	app.Get("/b", func(c *fx.Ctx) error { return c.String(200, "get") })
	app.Head("/b", func(c *fx.Ctx) error { c.SetHeader("X-From", "head"); return c.NoContent(204) })
	r := do(t, app, "HEAD", "/a", "")
	if r.status != 200 || len(r.body) != 0 || r.header.Get("X-From") != "get" || gets != 1 {
		t.Errorf("HEAD /a: %d %q %v gets=%d", r.status, r.body, r.header, gets)
	}
	r = do(t, app, "HEAD", "/b", "")
	if r.status != 204 || r.header.Get("X-From") != "head" {
		t.Errorf("HEAD /b: %d %v", r.status, r.header)
	}
	// HEAD of an unknown path: 404 without body.
	r = do(t, app, "HEAD", "/nope", "")
	if r.status != 404 || len(r.body) != 0 {
		t.Errorf("HEAD /nope: %d %q", r.status, r.body)
	}
}

func TestRoutingAnyMethodAndHelpers(t *testing.T) {
	app := quiet()
	for _, r := range []struct {
		method string
		add    func(string, fx.Handler)
	}{
		{"GET", app.Get}, {"POST", app.Post}, {"PUT", app.Put}, {"PATCH", app.Patch},
		{"DELETE", app.Delete}, {"OPTIONS", app.Options},
		{"PURGE", func(path string, h fx.Handler) { app.Handle("PURGE", path, h) }},
	} {
		r.add("/m", func(c *fx.Ctx) error { return c.String(200, r.method+" "+c.Method()) })
	}
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PURGE"} {
		r := do(t, app, m, "/m", "")
		if string(r.body) != m+" "+m {
			t.Errorf("%s: %d %q", m, r.status, r.body)
		}
	}
}

// Bad route paths are configuration errors reported by Boot, not panics.
func TestRoutingBadPathsAreBootErrors(t *testing.T) {
	h := func(c *fx.Ctx) error { return nil }
	for _, p := range []string{"", "no-slash", "/a/*rest/more", "/a/:", "/a/:id/:id", "/a/{x}", "/a/b:c"} {
		app := quiet()
		app.Get(p, h)
		err := app.Boot()
		var fe *fx.Error
		if !errors.As(err, &fe) || fe.Status != 500 {
			t.Errorf("path %q: Boot = %v", p, err)
		}
	}
	// Registering the same route twice is reported too.
	app := quiet()
	app.Get("/dup", h)
	app.Get("/dup", h)
	if err := app.Boot(); err == nil {
		t.Error("duplicate route: Boot = nil")
	}
	// A conflicting parameter name at the same position.
	app = quiet()
	app.Get("/u/:id", h)
	app.Get("/u/:name/x", h)
	err := app.Boot()
	if err != nil {
		// Either accepted or reported as a boot error, never a panic.
		var fe *fx.Error
		if !errors.As(err, &fe) {
			t.Errorf("conflict: %v is not an *fx.Error", err)
		}
	}
}

// Middleware registered after routes still wraps them (and the 404).
func TestUseAfterRoutesWrapsThem(t *testing.T) {
	app := quiet()
	app.Get("/", func(c *fx.Ctx) error { return c.String(200, "ok") })
	app.Use(func(c *fx.Ctx, next fx.Next) error { c.SetHeader("X-MW", "1"); return next() })
	for _, p := range []string{"/", "/nope"} {
		req := httptest.NewRequest("GET", p, nil)
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Header.Get("X-MW") != "1" {
			t.Errorf("%s: middleware did not run", p)
		}
		if p == "/nope" && resp.StatusCode != http.StatusNotFound {
			t.Errorf("404 became %d", resp.StatusCode)
		}
	}
}

// With HandleOPTIONS the automatic answer runs through the middleware, so
// CORS middleware can answer preflights; without it, middleware sees the
// OPTIONS request on the 404 path.
func TestOptionsThroughMiddleware(t *testing.T) {
	for _, auto := range []bool{false, true} {
		app := quiet(fx.Config{HandleOPTIONS: auto})
		app.Use(func(c *fx.Ctx, next fx.Next) error {
			if c.Method() == "OPTIONS" && c.Header("Access-Control-Request-Method") != "" {
				c.SetHeader("Access-Control-Allow-Origin", "*")
				return c.NoContent(204)
			}
			return next()
		})
		app.Post("/a", func(c *fx.Ctx) error { return c.String(200, "a") })
		r := do(t, app, "OPTIONS", "/a", "", "Access-Control-Request-Method", "POST", "Origin", "http://x")
		if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("auto=%v preflight: %d %v", auto, r.status, r.header)
		}
		r = do(t, app, "OPTIONS", "/a", "")
		if auto && (r.status != 200 || !strings.Contains(r.header.Get("Allow"), "POST")) {
			t.Errorf("auto OPTIONS: %d %v", r.status, r.header)
		}
		if !auto {
			mustEnvelope(t, r, 404, fx.ErrorCodes.NotFound)
		}
	}
}

// Unmatched routes get the 404 envelope, a known path with another method
// included.
func TestNotFound(t *testing.T) {
	for _, withMW := range []bool{false, true} {
		app := quiet()
		if withMW {
			app.Use(func(c *fx.Ctx, next fx.Next) error { return next() })
		}
		app.Get("/users", func(c *fx.Ctx) error { return nil })
		for _, tc := range []struct{ method, path string }{
			{"GET", "/nope"}, {"POST", "/users"}, {"DELETE", "/users"}, {"PURGE", "/users"}, {"GET", "/users/x"},
		} {
			r := do(t, app, tc.method, tc.path, "")
			env := mustEnvelope(t, r, 404, fx.ErrorCodes.NotFound)
			want := "Route " + tc.method + " " + tc.path + " not found"
			if env.Message != want {
				t.Errorf("mw=%v: message = %q, want %q", withMW, env.Message, want)
			}
			if r.header.Get("Allow") != "" || r.header.Get("Location") != "" {
				t.Errorf("404 carries Allow/Location: %v", r.header)
			}
		}
	}
}

// TestRouteConflictsReportedOnce: each conflicting registration is one boot
// error, in fx's ":name" / "*name" syntax (never the router's "{name}"),
// and a GET's automatic HEAD does not repeat it.
func TestRouteConflictsReportedOnce(t *testing.T) {
	h := func(c *fx.Ctx) error { return nil }
	app := quiet()
	app.Get("/users/:id", h)
	app.Get("/users/:name", h) // same shape, other name
	app.Get("/dup", h)
	app.Get("/dup", h) // the same method and path twice
	app.Get("/files/*a", h)
	app.Get("/files/*b", h)
	app.Head("/h/:x", h)
	app.Head("/h/:y", h)
	app.Get("/h/:z", h)         // its HEAD twin defers to the explicit HEAD: no conflict
	app.Post("/users/:name", h) // another method: no conflict
	g := app.Group("/g")
	g.Put("/:id", h)
	g.Put("/:key", h)
	var got []string
	for _, fe := range bootErrors(t, app) {
		if fe.Code != fx.ErrorCodes.InternalError {
			t.Errorf("%v is not an FX_INTERNAL_ERROR", fe)
		}
		got = append(got, fe.Error())
	}
	want := []string{
		"Route GET /users/:name: conflicts with GET /users/:id",
		"Route GET /dup: registered twice",
		"Route GET /files/*b: conflicts with GET /files/*a",
		"Route HEAD /h/:y: conflicts with HEAD /h/:x",
		"Route PUT /g/:key: conflicts with PUT /g/:id",
	}
	if len(got) != len(want) {
		t.Fatalf("%d errors, want %d (one per conflict):\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("error %d = %q, want it to say %q", i, got[i], w)
		}
		if strings.ContainsAny(got[i], "{}") {
			t.Errorf("error %d = %q uses the router's syntax", i, got[i])
		}
	}
}

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
