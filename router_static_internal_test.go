package fx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestStaticRoutesAgreeWithRouter: with the static table in front (as Boot
// builds it) and without it (the one-path step and the router alone),
// every request gets the same answer: the same route, c.Path() and
// parameters, the same 404, 400, redirect or automatic OPTIONS. The
// routes overlap on purpose (a static segment beside a parameter and a
// catch-all, a trailing slash, a HEAD twin, a custom method, paths the
// table must not admit).
func TestStaticRoutesAgreeWithRouter(t *testing.T) {
	paths := []string{
		"/", "/a", "/d/", "/A", "/b", "/users/new", "/users/:id", "/users/:id/posts",
		"/files/static", "/files/*rest", "/x/y", "/x//y", "/x/./z", "/caf%C3%A9", "/q",
	}
	requests := []string{
		"/", "/a", "/a/", "/A", "/a?x=1", "/b/", "/B", "/d", "/d/", "/users/new", "/users/new/", "/users/42",
		"/users/new/posts", "/files/static", "/files/static/", "/files/a/b", "/x/y", "/x//y",
		"/x/./y", "/x/z", "/x/./z", "/x/%79", "//a", "/./a", "/a/..", "/caf%C3%A9", "/café",
		"/a%2Fb", `/a\b`, "/%61", "/nope", "*", "/q#f", "http://h.example/a",
	}
	long := "/" + strings.Repeat("l", 70) // beyond the short lists
	paths = append(paths, long)
	requests = append(requests, long, long+"/", long[:64])
	for i := range shortMax + 3 { // more paths of one length than a short list holds
		p := fmt.Sprintf("/n%02d", i)
		paths = append(paths, p)
		requests = append(requests, p)
	}
	requests = append(requests, "/n99", "/m00")
	for _, cfg := range []Config{
		{},
		{RedirectTrailingSlash: true, RedirectFixedPath: true},
		{HandleOPTIONS: true},
	} {
		build := func() *App {
			a := New(cfg)
			for _, p := range paths {
				a.Get(p, routeEcho(p))
				a.Post(p, routeEcho("POST "+p))
			}
			a.Handle(fasthttp.MethodHead, "/b", routeEcho("HEAD /b"))
			a.Handle(fasthttp.MethodOptions, "/q", routeEcho("OPTIONS /q"))
			a.Handle("PURGE", "/a", routeEcho("PURGE /a"))
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
		routerOnly := b.dispatch(new(staticRoutes), r.Handler)
		for _, method := range []string{"GET", "HEAD", "POST", "OPTIONS", "PURGE", "DELETE"} {
			for _, uri := range requests {
				got, want := answer(withTable, method, uri), answer(routerOnly, method, uri)
				if got != want {
					t.Errorf("%+v %s %s:\n with the table %s\n router alone   %s", cfg, method, uri, got, want)
				}
			}
		}
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
	return fmt.Sprintf("%d %q location=%q allow=%q", rc.Response.StatusCode(), rc.Response.Body(),
		rc.Response.Header.Peek("Location"), rc.Response.Header.Peek("Allow"))
}
