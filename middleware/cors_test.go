package middleware_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware"
	"github.com/valyala/fasthttp"
)

const appOrigin = "https://app.example.com"

// varyList is every name the response's Vary fields list.
func varyList(h http.Header) []string {
	var out []string
	for _, f := range h.Values("Vary") {
		for _, s := range strings.Split(f, ",") {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

// corsHeaders is every Access-Control-* header of h.
func corsHeaders(h http.Header) []string {
	var out []string
	for k := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			out = append(out, k+": "+h.Get(k))
		}
	}
	slices.Sort(out)
	return out
}

func expectVary(t *testing.T, h http.Header, names ...string) {
	t.Helper()
	got := varyList(h)
	for _, n := range names {
		if c := strings.Count(strings.Join(got, "\x00")+"\x00", n+"\x00"); c != 1 {
			t.Errorf("Vary %q lists %s %d times, want once", got, n, c)
		}
	}
}

// corsApp has only POST /orders (no OPTIONS route) and GET /r.
func corsApp(cfg middleware.CORSConfig, config ...fx.Config) *fx.App {
	app := fx.New(config...)
	app.Use(middleware.CORS(cfg))
	app.Post("/orders", func(c *fx.Ctx) error { return c.JSON(201, map[string]string{"id": "1"}) })
	app.Get("/r", func(c *fx.Ctx) error { return c.String(200, "ok") })
	return app
}

// TestCORSPreflightWithoutOptionsRoute: a preflight for a route that only
// has POST is answered 204 by the middleware, with or without
// Config.HandleOPTIONS, and so is one for a path with no route at all.
func TestCORSPreflightWithoutOptionsRoute(t *testing.T) {
	cfg := middleware.CORSConfig{AllowOrigins: []string{appOrigin}, AllowCredentials: true}
	for _, handleOptions := range []bool{false, true} {
		app := corsApp(cfg, fx.Config{HandleOPTIONS: handleOptions})
		for _, path := range []string{"/orders", "/no/such/route"} {
			r := send(t, app, "OPTIONS", path,
				"Origin", appOrigin,
				"Access-Control-Request-Method", "POST",
				"Access-Control-Request-Headers", "content-type,x-request-id")
			if r.status != 204 || r.body != "" {
				t.Fatalf("HandleOPTIONS=%v %s: %d %q, want 204 and no body", handleOptions, path, r.status, r.body)
			}
			want := []string{
				"Access-Control-Allow-Credentials: true",
				"Access-Control-Allow-Headers: content-type,x-request-id",
				"Access-Control-Allow-Methods: GET, HEAD, POST, PUT, PATCH, DELETE",
				"Access-Control-Allow-Origin: " + appOrigin,
				"Access-Control-Max-Age: 600",
			}
			if got := corsHeaders(r.header); !slices.Equal(got, want) {
				t.Errorf("HandleOPTIONS=%v %s: headers\n%q\nwant\n%q", handleOptions, path, got, want)
			}
			expectVary(t, r.header, "Origin", "Access-Control-Request-Method", "Access-Control-Request-Headers")
		}
	}
}

// TestCORSPreflightDisallowedOrigin: a preflight from an origin that is not
// allowed gets 204 with no CORS header (the browser fails the preflight)
// and never reaches the application's OPTIONS handler.
func TestCORSPreflightDisallowedOrigin(t *testing.T) {
	app := fx.New()
	app.Use(middleware.CORS(middleware.CORSConfig{AllowOrigins: []string{appOrigin}}))
	reached := 0
	app.Options("/orders", func(c *fx.Ctx) error { reached++; return c.NoContent(200) })
	r := send(t, app, "OPTIONS", "/orders",
		"Origin", "https://evil.example.net", "Access-Control-Request-Method", "DELETE")
	if r.status != 204 || len(corsHeaders(r.header)) != 0 || reached != 0 {
		t.Fatalf("got %d %q, handler ran %d times; want 204, no CORS headers, handler not run", r.status, corsHeaders(r.header), reached)
	}
	expectVary(t, r.header, "Origin", "Access-Control-Request-Method")

	// An OPTIONS request that is not a preflight (no
	// Access-Control-Request-Method) is an ordinary request.
	r = send(t, app, "OPTIONS", "/orders", "Origin", appOrigin)
	if r.status != 200 || reached != 1 || r.header.Get("Access-Control-Allow-Origin") != appOrigin {
		t.Fatalf("plain OPTIONS: %d, handler ran %d times, ACAO %q", r.status, reached, r.header.Get("Access-Control-Allow-Origin"))
	}
}

// TestCORSPreflightHeaders: configured AllowHeaders are sent as they are;
// echoed request headers must be a list of header names; MaxAge is
// configurable and can be left out.
func TestCORSPreflightHeaders(t *testing.T) {
	pre := func(app *fx.App, acrh string) http.Header {
		t.Helper()
		r := send(t, app, "OPTIONS", "/r", "Origin", appOrigin,
			"Access-Control-Request-Method", "PUT", "Access-Control-Request-Headers", acrh)
		if r.status != 204 {
			t.Fatalf("status %d", r.status)
		}
		return r.header
	}
	app := corsApp(middleware.CORSConfig{
		AllowOrigins: []string{appOrigin},
		AllowHeaders: []string{"Content-Type", "Authorization"},
		AllowMethods: []string{"GET", "PUT"},
		MaxAge:       90 * time.Second,
	})
	h := pre(app, "x-anything")
	if h.Get("Access-Control-Allow-Headers") != "Content-Type, Authorization" ||
		h.Get("Access-Control-Allow-Methods") != "GET, PUT" || h.Get("Access-Control-Max-Age") != "90" {
		t.Fatalf("got %q", corsHeaders(h))
	}

	app = corsApp(middleware.CORSConfig{AllowOrigins: []string{appOrigin}, MaxAge: -1})
	for _, bad := range []string{"x-a;x-b", "x a", "(x)", ",,"} {
		h = pre(app, bad)
		if v := h.Get("Access-Control-Allow-Headers"); v != "" {
			t.Errorf("Access-Control-Request-Headers %q echoed as %q", bad, v)
		}
	}
	h = pre(app, "x-a, x-b")
	if v := h.Get("Access-Control-Allow-Headers"); v != "x-a, x-b" {
		t.Errorf("echo: %q", v)
	}
	if v, ok := h["Access-Control-Max-Age"]; ok {
		t.Errorf("MaxAge -1 sent Access-Control-Max-Age %q", v)
	}

	app = corsApp(middleware.CORSConfig{AllowOrigins: []string{appOrigin}, AllowHeaders: []string{}})
	if v, ok := pre(app, "x-a")["Access-Control-Allow-Headers"]; ok {
		t.Errorf("empty AllowHeaders sent %q", v)
	}
}

// TestCORSOriginMatching: exact origins (case-insensitive), wildcard
// subdomains, "*", "null" and AllowOriginFunc.
func TestCORSOriginMatching(t *testing.T) {
	list := corsApp(middleware.CORSConfig{AllowOrigins: []string{
		appOrigin, "http://localhost:3000", "https://*.example.com", "https://*.dev.example.org:8443", "http://[::1]:8080",
	}})
	star := corsApp(middleware.CORSConfig{AllowOrigins: []string{"*"}})
	starNull := corsApp(middleware.CORSConfig{AllowOrigins: []string{"*", "null"}})
	fn := corsApp(middleware.CORSConfig{
		AllowOrigins:    []string{appOrigin},
		AllowOriginFunc: func(o string) bool { return strings.HasSuffix(o, ".partner.test") },
	})
	for _, tc := range []struct {
		name   string
		app    *fx.App
		origin string
		want   string // Access-Control-Allow-Origin, "" for none
	}{
		{"exact", list, appOrigin, appOrigin},
		{"exact other case", list, "HTTPS://App.Example.COM", "HTTPS://App.Example.COM"},
		{"exact with port", list, "http://localhost:3000", "http://localhost:3000"},
		{"exact wrong port", list, "http://localhost:3001", ""},
		{"exact wrong scheme", list, "http://app.example.com", ""},
		{"ipv6", list, "http://[::1]:8080", "http://[::1]:8080"},
		{"wildcard one label", list, "https://a.example.com", "https://a.example.com"},
		{"wildcard two labels", list, "https://a.b.example.com", "https://a.b.example.com"},
		{"wildcard not the apex", list, "https://example.com", ""},
		{"wildcard other scheme", list, "http://a.example.com", ""},
		{"wildcard with port", list, "https://a.example.com:8443", ""},
		{"lookalike prefix", list, "https://evil-example.com", ""},
		{"lookalike suffix", list, "https://example.com.evil.io", ""},
		{"empty label", list, "https://.example.com", ""},
		{"double dot", list, "https://a..example.com", ""},
		{"userinfo", list, "https://evil.io@a.example.com", ""},
		{"fragment", list, "https://evil.io#.example.com", ""},
		{"path", list, "https://evil.io/.example.com", ""},
		{"port smuggle", list, "https://evil.io:1.example.com", ""},
		{"trailing slash", list, "https://a.example.com/", ""},
		{"wildcard port", list, "https://x.dev.example.org:8443", "https://x.dev.example.org:8443"},
		{"wildcard port missing", list, "https://x.dev.example.org", ""},
		{"null not listed", list, "null", ""},
		{"star", star, "https://anyone.test", "*"},
		{"star not null", star, "null", ""},
		{"null listed", starNull, "null", "null"},
		{"func yes", fn, "https://a.partner.test", "https://a.partner.test"},
		{"func no", fn, "https://a.partner.test.evil", ""},
		{"func list first", fn, appOrigin, appOrigin},
	} {
		r := send(t, tc.app, "GET", "/r", "Origin", tc.origin)
		if r.status != 200 || r.body != "ok" {
			t.Fatalf("%s: %d %q", tc.name, r.status, r.body)
		}
		got := r.header.Get("Access-Control-Allow-Origin")
		if got != tc.want {
			t.Errorf("%s: Origin %q got Access-Control-Allow-Origin %q, want %q", tc.name, tc.origin, got, tc.want)
		}
		if tc.want == "" && len(corsHeaders(r.header)) != 0 {
			t.Errorf("%s: disallowed origin got %q", tc.name, corsHeaders(r.header))
		}
		expectVary(t, r.header, "Origin")
	}
}

// TestCORSDisallowedRequestProceeds: an actual request from an origin that
// is not allowed is served as usual, without any CORS header; a request
// without Origin too, with Vary: Origin.
func TestCORSDisallowedRequestProceeds(t *testing.T) {
	app := corsApp(middleware.CORSConfig{AllowOrigins: []string{appOrigin}, ExposeHeaders: []string{"X-Request-ID"}})
	for _, origin := range []string{"https://evil.example.net", ""} {
		r := send(t, app, "POST", "/orders", "Origin", origin)
		if r.status != 201 || r.body != `{"id":"1"}` || len(corsHeaders(r.header)) != 0 {
			t.Fatalf("Origin %q: %d %q %q", origin, r.status, r.body, corsHeaders(r.header))
		}
		expectVary(t, r.header, "Origin")
	}
}

// TestCORSHeadersOnErrors: an allowed origin's CORS headers are on the
// envelope of a returned *fx.Error, a panic and an unmatched route.
func TestCORSHeadersOnErrors(t *testing.T) {
	app := fx.New(quiet)
	app.Use(middleware.CORS(middleware.CORSConfig{
		AllowOrigins: []string{appOrigin}, AllowCredentials: true, ExposeHeaders: []string{"X-Request-ID", "Retry-After"},
	}))
	app.Get("/conflict", func(c *fx.Ctx) error {
		return fx.NewError(409, "ORDER_EXISTS", "Order already exists")
	})
	app.Get("/panic", func(c *fx.Ctx) error { panic("boom") })
	for _, tc := range []struct {
		path   string
		status int
		code   string
	}{
		{"/conflict", 409, "ORDER_EXISTS"},
		{"/panic", 500, fx.ErrorCodes.InternalError},
		{"/nope", 404, fx.ErrorCodes.NotFound},
	} {
		r := send(t, app, "GET", tc.path, "Origin", appOrigin)
		if r.status != tc.status || !strings.Contains(r.body, `"code":"`+tc.code+`"`) {
			t.Fatalf("%s: %d %s", tc.path, r.status, r.body)
		}
		want := []string{
			"Access-Control-Allow-Credentials: true",
			"Access-Control-Allow-Origin: " + appOrigin,
			"Access-Control-Expose-Headers: X-Request-ID, Retry-After",
		}
		if got := corsHeaders(r.header); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", tc.path, got, want)
		}
		expectVary(t, r.header, "Origin")
	}
}

// TestCORSVaryMerged: Vary: Origin is added to the Vary values set before
// and after it, never replacing them, and restored when a handler replaces
// the Vary header.
func TestCORSVaryMerged(t *testing.T) {
	app := fx.New()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		c.RequestCtx().Response.Header.Add("Vary", "Accept-Language")
		return next()
	}, middleware.CORS(middleware.CORSConfig{AllowOrigins: []string{appOrigin}}))
	app.Get("/set", func(c *fx.Ctx) error {
		c.SetHeader("Vary", "Accept-Encoding") // replaces every Vary so far
		return c.String(200, "ok")
	})
	app.Get("/add", func(c *fx.Ctx) error {
		c.RequestCtx().Response.Header.Add("Vary", "Accept-Encoding, origin")
		return c.String(200, "ok")
	})
	r := send(t, app, "GET", "/set", "Origin", appOrigin)
	expectVary(t, r.header, "Accept-Encoding", "Origin")

	// With CORS's the only Vary, the handler's SetHeader replaces it.
	alone := fx.New()
	alone.Use(middleware.CORS(middleware.CORSConfig{AllowOrigins: []string{appOrigin}}))
	alone.Get("/set", func(c *fx.Ctx) error {
		c.SetHeader("Vary", "Accept-Encoding")
		return fx.NewError(409, "CONFLICT", "conflict")
	})
	r = send(t, alone, "GET", "/set", "Origin", appOrigin)
	expectVary(t, r.header, "Accept-Encoding", "Origin")
	r = send(t, app, "GET", "/add", "Origin", appOrigin)
	if got := varyList(r.header); !slices.Equal(got, []string{"Accept-Language", "Origin", "Accept-Encoding", "origin"}) {
		t.Errorf("Vary %q", got)
	}
	r = send(t, app, "OPTIONS", "/add", "Origin", appOrigin, "Access-Control-Request-Method", "GET")
	if got := varyList(r.header); !slices.Equal(got, []string{"Accept-Language", "Origin", "Access-Control-Request-Method", "Access-Control-Request-Headers"}) {
		t.Errorf("preflight Vary %q", got)
	}
}

// TestCORSConfigErrors: invalid configurations panic at construction and
// the message lists every problem.
func TestCORSConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  middleware.CORSConfig
		want []string
	}{
		{middleware.CORSConfig{}, []string{"set AllowOrigins, AllowOriginFunc or both"}},
		{middleware.CORSConfig{AllowOrigins: []string{"*"}, AllowCredentials: true}, []string{`AllowOrigins "*" cannot be combined with AllowCredentials`}},
		{middleware.CORSConfig{AllowOrigins: []string{appOrigin}, AllowCredentials: true, AllowHeaders: []string{"*"}, ExposeHeaders: []string{"*"}},
			[]string{`AllowHeaders "*" cannot`, `ExposeHeaders "*" cannot`}},
		{middleware.CORSConfig{AllowOrigins: []string{
			"https://app.example.com/", "https://app.example.com/v1", "app.example.com", "https://app.example.com:443",
			"http://x.test:80", "https://*example.com", "https://a.*.example.com", "https://x.test:0", "https://x.test:99999",
			"https://user@x.test", "https://", "https://[::1",
		}}, []string{
			`"https://app.example.com/": an origin has no path`,
			`"https://app.example.com/v1": an origin has no path`,
			`"app.example.com": want scheme://host[:port]`,
			`"https://app.example.com:443": browsers never send the default port`,
			`"http://x.test:80": browsers never send the default port`,
			`"https://*example.com": a wildcard must be the whole first label`,
			`"https://a.*.example.com": a wildcard must be the whole first label`,
			`"https://x.test:0": invalid port`,
			`"https://x.test:99999": invalid port`,
			`"https://user@x.test": an origin has no path, query, user`,
			`"https://": malformed host`,
			`"https://[::1": malformed IPv6 host`,
		}},
		{middleware.CORSConfig{AllowOrigins: []string{appOrigin}, AllowMethods: []string{"GE T"}, AllowHeaders: []string{"X:Y"}},
			[]string{`AllowMethods: "GE T" is not a valid token`, `AllowHeaders: "X:Y" is not a valid token`}},
	} {
		assertConfigPanic(t, "middleware.CORS: ", tc.cfg, func() { middleware.CORS(tc.cfg) }, tc.want)
	}
}

// TestCORSPublicSuffixWildcard: with AllowCredentials, a wildcard whose
// "*." covers a public suffix (ICANN, private section, or an unlisted
// top-level name) is refused at start-up, as "*" is, and every such
// pattern is named; the same patterns without credentials, and wildcards
// under a registrable domain with them, are accepted and match.
func TestCORSPublicSuffixWildcard(t *testing.T) {
	suffixes := []string{"https://*.com", "https://*.co.uk", "https://*.github.io", "http://*.internal:8080"}
	cfg := middleware.CORSConfig{AllowOrigins: suffixes, AllowCredentials: true}
	assertConfigPanic(t, "middleware.CORS: ", cfg, func() { middleware.CORS(cfg) }, []string{
		`origin pattern "https://*.com" cannot be combined with AllowCredentials: "com" is a public suffix`,
		`origin pattern "https://*.co.uk" cannot be combined with AllowCredentials: "co.uk" is a public suffix`,
		`origin pattern "https://*.github.io" cannot be combined with AllowCredentials: "github.io" is a public suffix`,
		`origin pattern "http://*.internal:8080" cannot be combined with AllowCredentials: "internal" is a public suffix`,
	})

	for _, tc := range []struct {
		cfg            middleware.CORSConfig
		origin, credit string
	}{
		{middleware.CORSConfig{AllowOrigins: suffixes}, "https://evil.com", ""},
		{middleware.CORSConfig{AllowOrigins: []string{"https://*.example.co.uk"}, AllowCredentials: true}, "https://app.example.co.uk", "true"},
		{middleware.CORSConfig{AllowOrigins: []string{"https://*.me.github.io"}, AllowCredentials: true}, "https://a.me.github.io", "true"},
	} {
		r := send(t, corsApp(tc.cfg), "GET", "/r", "Origin", tc.origin)
		if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != tc.origin ||
			r.header.Get("Access-Control-Allow-Credentials") != tc.credit {
			t.Errorf("%v from %s: %d %v", tc.cfg.AllowOrigins, tc.origin, r.status, corsHeaders(r.header))
		}
	}
}

// benchRequest serves the request setup prepares through app's handler
// repeatedly (in process, no network) and checks the status.
func benchRequest(b *testing.B, app *fx.App, setup func(*fasthttp.RequestCtx), status int) {
	b.Helper()
	if err := app.Boot(); err != nil {
		b.Fatal(err)
	}
	kittest.BenchParallel(b, app.Handler(), "GET", "/", status, setup)
}

func benchCORSApp(mw ...fx.Middleware) *fx.App {
	app := fx.New()
	app.Use(mw...)
	app.Get("/r", func(c *fx.Ctx) error { return c.String(200, "ok") })
	return app
}

var benchCORS = middleware.CORSConfig{
	AllowOrigins:     []string{"http://localhost:3000", appOrigin, "https://admin.example.com", "https://*.preview.example.com"},
	AllowCredentials: true,
	ExposeHeaders:    []string{"X-Request-ID"},
}

func getWithOrigin(origin string) func(*fasthttp.RequestCtx) {
	return func(rc *fasthttp.RequestCtx) {
		rc.Request.SetRequestURI("/r")
		rc.Request.Header.Set("Origin", origin)
	}
}

// BenchmarkCORSBaseline is the allowed GET's route without CORS: subtract
// it from the others.
func BenchmarkCORSBaseline(b *testing.B) {
	benchRequest(b, benchCORSApp(), getWithOrigin(appOrigin), 200)
}

// BenchmarkCORSAllowed is a GET from an exactly listed origin.
func BenchmarkCORSAllowed(b *testing.B) {
	benchRequest(b, benchCORSApp(middleware.CORS(benchCORS)), getWithOrigin(appOrigin), 200)
}

// BenchmarkCORSAllowedWildcard is a GET from an origin a wildcard matches.
func BenchmarkCORSAllowedWildcard(b *testing.B) {
	benchRequest(b, benchCORSApp(middleware.CORS(benchCORS)), getWithOrigin("https://pr-42.preview.example.com"), 200)
}

// BenchmarkCORSDisallowed is a GET from an origin that is not allowed.
func BenchmarkCORSDisallowed(b *testing.B) {
	benchRequest(b, benchCORSApp(middleware.CORS(benchCORS)), getWithOrigin("https://evil.example.net"), 200)
}

// BenchmarkCORSPreflight is an allowed preflight with echoed headers.
func BenchmarkCORSPreflight(b *testing.B) {
	benchRequest(b, benchCORSApp(middleware.CORS(benchCORS)), func(rc *fasthttp.RequestCtx) {
		rc.Request.SetRequestURI("/r")
		rc.Request.Header.SetMethod("OPTIONS")
		rc.Request.Header.Set("Origin", appOrigin)
		rc.Request.Header.Set("Access-Control-Request-Method", "PUT")
		rc.Request.Header.Set("Access-Control-Request-Headers", "content-type,x-request-id")
	}, 204)
}

// TestCORSNullWithCredentials: "null" (the opaque origin any page can take
// on, from a sandboxed iframe) with AllowCredentials is refused at
// start-up, as "*" is; AllowOriginFunc is never asked about it then.
// Without credentials it is still allowed when listed.
func TestCORSNullWithCredentials(t *testing.T) {
	cfg := middleware.CORSConfig{AllowOrigins: []string{appOrigin, "null"}, AllowCredentials: true}
	assertConfigPanic(t, "middleware.CORS: ", cfg, func() { middleware.CORS(cfg) }, []string{
		`AllowOrigins "null" cannot be combined with AllowCredentials`,
	})

	everyone := corsApp(middleware.CORSConfig{AllowOriginFunc: func(string) bool { return true }, AllowCredentials: true})
	for _, origin := range []string{"null", "NULL"} {
		if r := send(t, everyone, "GET", "/r", "Origin", origin); r.status != 200 || len(corsHeaders(r.header)) != 0 {
			t.Errorf("AllowOriginFunc with credentials allowed %q: %d %v", origin, r.status, corsHeaders(r.header))
		}
	}
	if r := send(t, everyone, "GET", "/r", "Origin", appOrigin); r.header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("AllowOriginFunc: other origins still allowed: %v", corsHeaders(r.header))
	}
	plain := corsApp(middleware.CORSConfig{AllowOrigins: []string{"null"}})
	if r := send(t, plain, "GET", "/r", "Origin", "null"); r.header.Get("Access-Control-Allow-Origin") != "null" {
		t.Errorf("null without credentials: %v", corsHeaders(r.header))
	}
}

// TestCORSRepeatedOrigin: two Origin lines (on an actual request or a
// preflight) are refused on both listeners with 400 FX_BAD_REQUEST
// (reason repeated_origin) and no Access-Control-Allow-Origin, even when
// the first origin is allowed; the refusal is declared.
func TestCORSRepeatedOrigin(t *testing.T) {
	cors := middleware.CORS(middleware.CORSConfig{AllowOrigins: []string{appOrigin}, AllowCredentials: true})
	app := fx.New()
	app.Use(cors)
	app.Get("/r", func(c *fx.Ctx) error { return c.String(200, "ok") })
	for _, lines := range [][]string{
		{"Origin", appOrigin, "Origin", "https://evil.example"},
		{"Origin", appOrigin, "Origin", appOrigin},
	} {
		for listener, r := range doRepeated(t, app, "/r", lines...) {
			if r.status != 400 || r.code != fx.ErrorCodes.BadRequest || r.reason != middleware.ReasonRepeatedOrigin ||
				r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("%s, %q: %d %v %s", listener, lines, r.status, corsHeaders(r.header), r.raw)
			}
		}
	}
	for listener, r := range doRepeated(t, app, "/r", "Origin", appOrigin) {
		if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != appOrigin {
			t.Errorf("%s, one Origin: %d %v", listener, r.status, corsHeaders(r.header))
		}
	}
	if !declares(cors, 400, fx.ErrorCodes.BadRequest) {
		t.Error("CORS does not declare 400 FX_BAD_REQUEST")
	}
}
