package fx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestStaticRoutesAgreeWithRouter: with the tables in front (as Boot
// builds them: the static table and the first-segment miss filter) and
// without them (the one-path step and the router alone), every request
// gets the same answer: the same route, c.Path() and parameters, the same
// 404 (its message, and what middleware, the error hook and the
// OnResponse observers see of it), 400, redirect or automatic OPTIONS.
// The routes overlap on purpose (a static segment beside a parameter and
// a catch-all, a trailing slash, a HEAD twin, a custom method, paths the
// table must not admit); a second route set has a parameter as a first
// segment, which must turn the filter off, and a third a catch-all.
func TestStaticRoutesAgreeWithRouter(t *testing.T) {
	t.Parallel() // CPU only: it overlaps the waits of the parallel tests
	paths := []string{
		"/", "/a", "/d/", "/A", "/b", "/users/new", "/users/:id", "/users/:id/posts",
		"/files/static", "/files/*rest", "/x/y", "/x//y", "/x/./z", "/caf%C3%A9", "/q",
		"/key", "/ſ", "/é/x",
	}
	requests := []string{
		"/", "/a", "/a/", "/A", "/a?x=1", "/b/", "/B", "/d", "/d/", "/users/new", "/users/new/", "/users/42",
		"/users/new/posts", "/files/static", "/files/static/", "/files/a/b", "/x/y", "/x//y",
		"/x/./y", "/x/z", "/x/./z", "/x/%79", "//a", "/./a", "/a/..", "/caf%C3%A9", "/café",
		"/a%2Fb", `/a\b`, "/%61", "/nope", "*", "/q#f", "http://h.example/a",
		// misses the filter answers, and near misses it must leave to the
		// router: a first byte or a length some route has, case and
		// trailing-slash variants, encodings that decode to a route or to
		// a miss, dot segments that lead back to a route, refusals
		"/nope/", "/nope/deeper/path", "/NOPE", "/Users/new", "/USERS/42", "/Users", "/users",
		"/users/", "/userz", "/usersx", "/u", "/Files/static", "/FILES/a", "/D", "/D/", "/KEY", "/Key/",
		"/\u212Aey", "/S", "/s", "/É/x", "/é/x", "/%C3%A9/x", "/%6eope", "/%75sers/new", "/n%6fpe/x",
		"/nope/../users/new", "/nope/./x", "/nope/..", "/zz/../a/", "/nope%2F", "/nope%2fx", `/nope\x`,
		"/nope%5C", "/nope%252e", "/*", "/*/x", "/:id", "/%", "/%zz", "/\x00", "/q/", "/Q",
	}
	long := "/" + strings.Repeat("l", 70) // beyond the short lists
	paths = append(paths, long)
	requests = append(requests, long, long+"/", long[:64], "/"+strings.Repeat("l", 63),
		"/"+strings.Repeat("m", 70), strings.ToUpper(long))
	for i := range shortMax + 3 { // more paths of one length than a short list holds
		p := fmt.Sprintf("/n%02d", i)
		paths = append(paths, p)
		requests = append(requests, p)
	}
	requests = append(requests, "/n99", "/m00", "/N00", "/n00/")
	type routeSet struct {
		name   string
		paths  []string
		filter bool // the first-segment filter is on (without RedirectFixedPath)
	}
	sets := []routeSet{
		{"static and nested parameters", paths, true},
		{"a parameter first", append([]string{"/:tenant/home"}, paths...), false},
		{"a catch-all first", append([]string{"/*all"}, paths[1:]...), false},
	}
	configs := []Config{
		{},
		{RedirectTrailingSlash: true},
		{RedirectTrailingSlash: true, RedirectFixedPath: true},
		{RedirectFixedPath: true},
		{HandleOPTIONS: true},
	}
	for _, set := range sets {
		for _, cfg := range configs {
			for _, hooks := range []bool{false, true} {
				checkAgreement(t, set.name, cfg, hooks, set.paths, requests, set.filter && !cfg.RedirectFixedPath)
			}
		}
	}
}

// checkAgreement is one case of TestStaticRoutesAgreeWithRouter: the
// routes paths (GET and POST each) under cfg, with middleware, an error
// hook and an observer when hooks is set, answer every request alike
// with the tables and with the router alone; filter says whether the
// first-segment filter must be on.
func checkAgreement(t *testing.T, set string, cfg Config, hooks bool, paths, requests []string, filter bool) {
	t.Helper()
	name := fmt.Sprintf("%s (trailing slash %v, fixed path %v, OPTIONS %v, hooks %v)", set,
		cfg.RedirectTrailingSlash, cfg.RedirectFixedPath, cfg.HandleOPTIONS, hooks)
	var seen []string // what the error hook and the observers saw, per App
	build := func() *App {
		a := New(cfg)
		for _, p := range paths {
			a.Get(p, routeEcho(p))
			a.Post(p, routeEcho("POST "+p))
		}
		a.Handle(fasthttp.MethodHead, "/b", routeEcho("HEAD /b"))
		a.Handle(fasthttp.MethodOptions, "/q", routeEcho("OPTIONS /q"))
		a.Handle("PURGE", "/a", routeEcho("PURGE /a"))
		if hooks {
			a.Use(func(c *Ctx, next Next) error {
				c.rc.Response.Header.Set("X-Mw", c.Method()+" "+c.Path())
				return next()
			})
			a.OnError(func(c *Ctx, err any) bool {
				seen = append(seen, fmt.Sprintf("hook %s %v", c.Path(), err))
				return false
			})
			a.OnResponse(func(c *Ctx) {
				seen = append(seen, fmt.Sprintf("observed %d %s route=%q path=%s", c.Status(), c.ErrorCode(), c.Route(), c.Path()))
			})
		}
		if err := a.Boot(); err != nil {
			t.Fatal(err)
		}
		return a
	}
	withTable := build().Handler()
	b := build()
	r, static, errs := b.buildRouter(b.specs, b.mws)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if static.heads.on != filter {
		t.Fatalf("%s: first-segment filter on = %v, want %v", name, static.heads.on, filter)
	}
	if len(static.paths) == 0 {
		t.Fatal("the table admitted no path")
	}
	for _, p := range []string{"/x//y", "/caf%C3%A9", "/users/:id"} {
		if _, in := static.paths[p]; in {
			t.Errorf("the table admitted %q", p)
		}
	}
	if static.crowded&(1<<4) == 0 || static.lens&(1<<63) == 0 {
		t.Fatalf("crowded %b, lens %b: the test misses the map's paths", static.crowded, static.lens)
	}
	for p, m := range static.paths { // a miss would be safe (the router answers) but slow
		for i, method := range staticMethods {
			if got := static.lookup([]byte(method), []byte(p)); got != m[i] {
				t.Errorf("lookup(%s %s) = %v, want %v", method, p, got, m[i])
			}
		}
	}
	routerOnly := b.dispatch(new(staticRoutes), r.Handler, r.NotFound)
	shortcuts := 0
	for _, method := range []string{"GET", "HEAD", "POST", "OPTIONS", "PURGE", "DELETE", "PUT", "CONNECT", "TRACE"} {
		for _, uri := range requests {
			seen = nil
			got := answer(withTable, method, uri) + strings.Join(seen, "; ")
			seen = nil
			want := answer(routerOnly, method, uri) + strings.Join(seen, "; ")
			if got != want {
				t.Errorf("%s %s %s:\n with the tables %s\n router alone    %s", name, method, uri, got, want)
			}
			if filter && static.heads.miss([]byte(uri)) {
				shortcuts++
			}
		}
	}
	if filter && shortcuts == 0 {
		t.Errorf("%s: the filter answered none of the requests", name)
	}
}

// routeEcho answers with the route's name, c.Path() and its parameters.
func routeEcho(name string) Handler {
	return func(c *Ctx) error {
		return c.String(200, fmt.Sprintf("%s path=%s id=%s rest=%s", name, c.Path(), c.Param("id"), c.Param("rest")))
	}
}

// answer runs one request through h and describes the response.
func answer(h fasthttp.RequestHandler, method, uri string) string {
	var rc fasthttp.RequestCtx
	rc.Request.Header.SetMethod(method)
	rc.Request.SetRequestURI(uri)
	h(&rc)
	return fmt.Sprintf("%d %q location=%q allow=%q mw=%q", rc.Response.StatusCode(), rc.Response.Body(),
		rc.Response.Header.Peek("Location"), rc.Response.Header.Peek("Allow"), rc.Response.Header.Peek("X-Mw"))
}

// TestRouterReasonInFxSyntax: a panic text of fasthttp/router that fx does
// not pre-empt still reaches the boot error in fx's syntax.
func TestRouterReasonInFxSyntax(t *testing.T) {
	for in, want := range map[string]string{
		"'{name}' in new path '/users/{name}' conflicts with existing wild path '{id}' in existing prefix '/users/{id}'": "':name' in new path '/users/:name' conflicts with existing wild path ':id' in existing prefix '/users/:id'",
		"'{b:*}' in new path '/f/{b:*}' conflicts with existing wildcard '{a:*}' in existing prefix '/f/{a:*}'":          "'*b' in new path '/f/*b' conflicts with existing wildcard '*a' in existing prefix '/f/*a'",
		"a handler is already registered for path '/dup'":                                                                "a handler is already registered for path '/dup'",
	} {
		if got := routerReason(in); got != want {
			t.Errorf("routerReason(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}
