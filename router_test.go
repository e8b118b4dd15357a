package fx_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/fxhq/fx"
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
