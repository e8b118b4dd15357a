package fx_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/nethttp"
)

// pathCase is one request target and what must happen to it. route is the
// pattern of the handler that must run ("" when none may), param its
// parameter value, mw the c.Path() the middleware must see ("" to skip).
type pathCase struct {
	target string
	status int
	route  string
	param  string
	mw     string
}

var pathCases = []pathCase{
	// Encoded dots: the reported bypass. The guard sees /public and so must
	// the router: the /secret handler never runs.
	{"/secret/x/%2e%2e/%2e%2e/public", 200, "/public", "", "/public"},
	{"/secret/x/%2E%2E/%2E%2E/public", 200, "/public", "", "/public"},
	{"/secret/x/.%2e/%2E./public", 200, "/public", "", "/public"},
	{"/secret/x/../../public", 200, "/public", "", "/public"},
	{"/files/%2e%2e/secret/x", 403, "", "", "/secret/x"},
	{"/files/a/%2e%2e/%2e%2e/%2e%2e/etc/passwd", 404, "", "", "/etc/passwd"},
	// "..;" is a plain segment (no servlet path parameters here), for both.
	{"/secret/..;/public", 403, "", "", "/secret/..;/public"},
	{"/public/..;/secret/x", 404, "", "", "/public/..;/secret/x"},
	{"/files/..;/x", 200, "/files/*p", "..;/x", "/files/..;/x"},
	// Repeated slashes collapse.
	{"//secret/x", 403, "", "", "/secret/x"},
	{"/files//a", 200, "/files/*p", "a", "/files/a"},
	// Encoded slash: refused.
	{"/files/a%2fb", 400, "", "", ""},
	{"/files/a%2Fb", 400, "", "", ""},
	{"/public%2Fx", 400, "", "", ""},
	// Backslash, raw or encoded: refused.
	{`/files/a\b`, 400, "", "", ""},
	{`/files/..\..\secret`, 400, "", "", ""},
	{"/files/..%5C..%5Csecret", 400, "", "", ""},
	// Trailing "/.": the current directory, leaving the slash.
	{"/files/x/.", 200, "/files/*p", "x/", "/files/x/"},
	{"/public/.", 404, "", "", "/public/"},
	// Double encoding: refused.
	{"/files/%252e%252e/secret", 400, "", "", ""},
	{"/files/%252F", 400, "", "", ""},
	// Ordinary escapes decode once, for the router as for c.Path().
	{"/files/caf%C3%A9", 200, "/files/*p", "café", "/files/café"},
	{"/users/%41", 200, "/users/:id", "A", "/users/A"},
	{"/files/100%25", 200, "/files/*p", "100%", "/files/100%"},
	{"/files/100%25zz", 200, "/files/*p", "100%zz", "/files/100%zz"},
}

// pathApp: a middleware that records c.Path() and guards /secret with a
// prefix check (the kind of guard the bypass defeated), and handlers that
// report their route pattern and parameter.
func pathApp() *fx.App {
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		c.SetHeader("X-Mw-Path", c.Path())
		c.SetValue(mwPathKey{}, c.Path())
		if strings.HasPrefix(c.Path(), "/secret") {
			return fx.NewError(403, fx.ErrorCodes.Forbidden, "no")
		}
		return next()
	})
	reply := func(route, param string) fx.Handler {
		return func(c *fx.Ctx) error {
			v := ""
			if param != "" {
				v = c.Param(param)
			}
			// JSON of byte slices (base64), not a joined string: a path or
			// parameter may hold any separator ("/files/|" once fooled a
			// "|"-joined body) and any byte (a JSON string would replace
			// invalid UTF-8). The middleware's path travels here too, as
			// bytes: its X-Mw-Path header cannot carry every byte.
			mw, _ := c.Value(mwPathKey{}).(string)
			return c.JSON(200, [4][]byte{[]byte(route), []byte(v), []byte(c.Path()), []byte(mw)})
		}
	}
	app.Get("/secret/*rest", reply("/secret/*rest", "rest"))
	app.Get("/public", reply("/public", ""))
	app.Get("/files/*p", reply("/files/*p", "p"))
	app.Get("/users/:id", reply("/users/:id", "id"))
	return app
}

// mwPathKey is the Ctx value under which pathApp's middleware keeps the
// path it saw.
type mwPathKey struct{}

// headerForm is s as a response header value carries it: fasthttp turns
// each CR and LF of a header value into a space (a header cannot hold a
// line break), so a path is compared through a header only in this form.
func headerForm(s string) string {
	b := []byte(s) // byte by byte: s may hold invalid UTF-8, which travels as it is
	for i, c := range b {
		if c == '\r' || c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}

// rawGet sends target verbatim on the request line (no client-side
// cleaning) and returns the response.
func rawGet(t *testing.T, addr, target string) (int, http.Header, string) {
	t.Helper()
	r := rawExchange(t, addr, 0, "GET "+target+" HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n")
	return r.status, r.header, string(r.body)
}

// TestOnePathBothTransports: for every encoding in pathCases, on fasthttp
// (the App's own server) and through nethttp.Handler (a net/http server),
// the handler that runs is the route c.Path() names, its parameter is the
// matching part of c.Path(), the middleware saw the same c.Path(), a
// catch-all never holds a ".." segment, and the ambiguous encodings are
// 400 FX_BAD_REQUEST.
func TestOnePathBothTransports(t *testing.T) {
	app := pathApp()
	for _, tr := range bothTransports(t, app) {
		for _, tc := range pathCases {
			status, hdr, body := rawGet(t, tr.addr, tc.target)
			where := tr.name + " GET " + tc.target
			if status != tc.status {
				t.Errorf("%s: status %d, want %d (%s)", where, status, tc.status, body)
				continue
			}
			mw := hdr.Get("X-Mw-Path")
			if tc.mw != "" && mw != tc.mw {
				t.Errorf("%s: middleware saw %q, want %q", where, mw, tc.mw)
			}
			if status != 200 {
				env := kittest.CheckEnvelope(t, status, hdr, []byte(body), "")
				if status == 400 && env.Code != fx.ErrorCodes.BadRequest {
					t.Errorf("%s: code %q", where, env.Code)
				}
				continue
			}
			var parts [4][]byte
			if err := json.Unmarshal([]byte(body), &parts); err != nil {
				t.Errorf("%s: body %q", where, body)
				continue
			}
			route, param, hpath := string(parts[0]), string(parts[1]), string(parts[2])
			if string(parts[3]) != mw {
				t.Errorf("%s: middleware path %q in the body, %q in its header", where, parts[3], mw)
			}
			if route != tc.route || param != tc.param {
				t.Errorf("%s: ran %s with %q, want %s with %q", where, route, param, tc.route, tc.param)
			}
			// The route pattern, filled with the parameter, is the path both
			// the middleware and the handler saw.
			filled := strings.Replace(strings.Replace(route, "*p", param, 1), ":id", param, 1)
			if filled != mw || hpath != mw {
				t.Errorf("%s: route %s=%q, handler path %q, middleware path %q disagree", where, route, param, hpath, mw)
			}
			for _, seg := range strings.Split(param, "/") {
				if seg == ".." {
					t.Errorf("%s: parameter %q holds a .. segment", where, param)
				}
			}
		}
	}
}

// TestRefusedPathBeforeMiddleware: a path refused for its encoding is
// refused before any middleware runs (the counting middleware is never
// called for it), on both transports, and the OnResponse observers (the
// access log among them) see the path as sent, escapes included, not the
// cleaned path it would have decoded to.
func TestRefusedPathBeforeMiddleware(t *testing.T) {
	app := quiet()
	var calls atomic.Int64
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		calls.Add(1)
		return next()
	})
	app.Get("/public", func(c *fx.Ctx) error { return c.String(200, "public") })
	type seen struct {
		path, route, code string
		status            int
	}
	got := make(chan seen, 1)
	app.OnResponse(func(c *fx.Ctx) {
		got <- seen{c.Path(), c.Route(), c.ErrorCode(), c.Status()}
	})
	for _, tr := range bothTransports(t, app) {
		for _, target := range []string{"/admin/x/..%2f..%2fpublic", "/x/..%5C..%5Cpublic", `/x/..\..\public`, "/files/%252e%252e/public"} {
			before := calls.Load()
			status, _, body := rawGet(t, tr.addr, target)
			where := tr.name + " GET " + target
			if status != 400 || !strings.Contains(body, fx.ErrorCodes.BadRequest) {
				t.Errorf("%s: %d %s, want the 400 envelope", where, status, body)
			}
			if n := calls.Load() - before; n != 0 {
				t.Errorf("%s: the middleware ran %d times for a refused path", where, n)
			}
			want := seen{target, "", fx.ErrorCodes.BadRequest, 400}
			if s := <-got; s != want {
				t.Errorf("%s: observed %+v, want %+v", where, s, want)
			}
		}
		// A plain request still runs the middleware, and is observed with
		// its (decoded) path as before.
		before := calls.Load()
		if status, _, _ := rawGet(t, tr.addr, "/x/%2e%2e/public"); status != 200 || calls.Load()-before != 1 {
			t.Errorf("%s: a routable path: %d, middleware ran %d times", tr.name, status, calls.Load()-before)
		}
		if s := <-got; s.path != "/public" || s.route != "/public" {
			t.Errorf("%s: a routable path observed as %+v", tr.name, s)
		}
	}
}

// BenchmarkEncodedPath: the cost of the one-path step. Each iteration
// sets the request URI afresh (the rewrite would otherwise persist across
// iterations): "plain" is /json, "dots" /x/%2e%2e/json (routed as /json).
func BenchmarkEncodedPath(b *testing.B) {
	for _, bc := range []struct{ name, target string }{
		{"plain", "/json"},
		{"dots", "/x/%2e%2e/json"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := benchApp()
			rc, _ := benchCtx(h, "GET", bc.target)
			b.ReportAllocs()
			for b.Loop() {
				rc.Response.Reset()
				rc.Request.SetRequestURI(bc.target)
				h(rc)
			}
			if rc.Response.StatusCode() != 200 {
				b.Fatalf("status %d", rc.Response.StatusCode())
			}
		})
	}
}

// FuzzOnePath: for any request target, the guarded /secret handler never
// runs, and a handler that runs saw the path the middleware saw, with its
// parameter the matching part of it and never a ".." segment. The paths
// are compared as bytes in the body, where every byte travels; the
// middleware's X-Mw-Path header only in the form a header can carry
// (headerForm: "files/000%0A0000000000000" decodes to an LF, which the
// header turns into a space).
func FuzzOnePath(f *testing.F) {
	for _, tc := range pathCases {
		f.Add(tc.target)
	}
	h := pathApp().Handler()
	f.Fuzz(func(t *testing.T, target string) {
		rc := serveRaw(h, "GET", target)
		if rc.Response.StatusCode() != 200 {
			return
		}
		var parts [4][]byte
		if err := json.Unmarshal(rc.Response.Body(), &parts); err != nil {
			t.Fatalf("%q: body %q", target, rc.Response.Body())
		}
		route, param, hpath, mw := string(parts[0]), string(parts[1]), string(parts[2]), string(parts[3])
		if hdr := string(rc.Response.Header.Peek("X-Mw-Path")); hdr != headerForm(mw) {
			t.Fatalf("%q: middleware path %q, its header %q", target, mw, hdr)
		}
		filled := strings.Replace(strings.Replace(route, "*p", param, 1), ":id", param, 1)
		if route == "/secret/*rest" || filled != mw || hpath != mw {
			t.Fatalf("%q: ran %s with %q; handler path %q, middleware path %q", target, route, param, hpath, mw)
		}
		for _, seg := range strings.Split(param, "/") {
			if seg == ".." {
				t.Fatalf("%q: parameter %q holds a .. segment", target, param)
			}
		}
	})
}

// transport is an address an App is served on, named for the server.
type transport struct{ name, addr string }

// bothTransports serves app on loopback twice until the test ends: by its
// own fasthttp server (fxtest.Serve) and through nethttp.Handler by a
// net/http server.
func bothTransports(t *testing.T, app *fx.App) []transport {
	std := httptest.NewServer(nethttp.Handler(app))
	t.Cleanup(std.Close)
	return []transport{{"fasthttp", fxtest.Serve(t, app)}, {"nethttp", std.Listener.Addr().String()}}
}
