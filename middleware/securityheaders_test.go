package middleware_test

import (
	"crypto/tls"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/valyala/fasthttp"
)

// tlsConn is a connection fasthttp takes for TLS (RequestCtx.IsTLS reports
// true). It is never read or written: requests are served in process.
type tlsConn struct{ net.Conn }

func (tlsConn) Handshake() error { return nil }
func (tlsConn) ConnectionState() tls.ConnectionState {
	return tls.ConnectionState{HandshakeComplete: true}
}
func (tlsConn) LocalAddr() net.Addr  { return &net.TCPAddr{} }
func (tlsConn) RemoteAddr() net.Addr { return &net.TCPAddr{} }

// serveRC runs one request through app's handler; tls makes it arrive over
// a TLS connection. It returns the response headers as "Name: value" lines
// (sorted) and the status.
func serveRC(t *testing.T, app *fx.App, tls bool, method, path string, header ...string) (int, map[string]string) {
	t.Helper()
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	var rc fasthttp.RequestCtx
	if tls {
		rc.Init2(tlsConn{}, nil, false)
	}
	rc.Request.Header.SetMethod(method)
	rc.Request.SetRequestURI(path)
	for i := 0; i+1 < len(header); i += 2 {
		rc.Request.Header.Set(header[i], header[i+1])
	}
	if tls != rc.IsTLS() {
		t.Fatalf("IsTLS %v, want %v", rc.IsTLS(), tls)
	}
	app.Handler()(&rc)
	out := map[string]string{}
	for k, v := range rc.Response.Header.All() {
		out[string(k)] = string(v)
	}
	return rc.Response.StatusCode(), out
}

// securityOnly keeps the headers SecurityHeaders may set.
func securityOnly(h map[string]string) []string {
	var out []string
	for k, v := range h {
		switch k {
		case "X-Content-Type-Options", "X-Frame-Options", "Content-Security-Policy", "Referrer-Policy",
			"Strict-Transport-Security", "Cross-Origin-Opener-Policy", "Cross-Origin-Resource-Policy", "X-Xss-Protection":
			out = append(out, k+": "+v)
		}
	}
	slices.Sort(out)
	return out
}

func securityApp(cfg middleware.SecurityHeadersConfig) *fx.App {
	app := fx.New(quiet)
	app.Use(middleware.SecurityHeaders(cfg))
	app.Get("/r", func(c *fx.Ctx) error { return c.String(200, "ok") })
	app.Get("/conflict", func(c *fx.Ctx) error { return fx.NewError(409, "ORDER_EXISTS", "Order already exists") })
	app.Get("/panic", func(c *fx.Ctx) error { panic("boom") })
	app.Get("/page", func(c *fx.Ctx) error {
		c.SetHeader("Content-Security-Policy", "default-src 'self'")
		return c.Send(200, "text/html; charset=utf-8", []byte("<p>hi</p>"))
	})
	return app
}

var defaultSecurity = []string{
	"Content-Security-Policy: default-src 'none'; frame-ancestors 'none'",
	"Referrer-Policy: strict-origin-when-cross-origin",
	"X-Content-Type-Options: nosniff",
	"X-Frame-Options: DENY",
}

// TestSecurityHeadersDefaults: the zero config sends the safe defaults,
// and Strict-Transport-Security only over TLS.
func TestSecurityHeadersDefaults(t *testing.T) {
	app := securityApp(middleware.SecurityHeadersConfig{})
	status, h := serveRC(t, app, false, "GET", "/r")
	if got := securityOnly(h); status != 200 || !slices.Equal(got, defaultSecurity) {
		t.Fatalf("plain HTTP: %d\n%q\nwant\n%q", status, got, defaultSecurity)
	}
	status, h = serveRC(t, app, true, "GET", "/r")
	want := append([]string{"Strict-Transport-Security: max-age=63072000"}, defaultSecurity...)
	slices.Sort(want)
	if got := securityOnly(h); status != 200 || !slices.Equal(got, want) {
		t.Fatalf("TLS: %d\n%q\nwant\n%q", status, got, want)
	}
}

// TestSecurityHeadersOnErrors: the headers are on the envelope of a
// returned *fx.Error, a panic, an unmatched route and a refusal by later
// middleware.
func TestSecurityHeadersOnErrors(t *testing.T) {
	app := securityApp(middleware.SecurityHeadersConfig{})
	for _, tc := range []struct {
		path   string
		status int
	}{{"/conflict", 409}, {"/panic", 500}, {"/nope", 404}} {
		status, h := serveRC(t, app, true, "GET", tc.path)
		if status != tc.status || h["Content-Type"] != "application/json" {
			t.Fatalf("%s: %d %q", tc.path, status, h["Content-Type"])
		}
		if got := securityOnly(h); len(got) != len(defaultSecurity)+1 || !slices.Contains(got, "Strict-Transport-Security: max-age=63072000") {
			t.Errorf("%s: %q", tc.path, got)
		}
	}

	app = fx.New()
	app.Use(middleware.SecurityHeaders(middleware.SecurityHeadersConfig{}),
		middleware.Auth(middleware.AuthConfig{APIKeys: apiKeys(t)}))
	app.Get("/r", whoami)
	status, h := serveRC(t, app, false, "GET", "/r")
	if got := securityOnly(h); status != 401 || !slices.Equal(got, defaultSecurity) {
		t.Fatalf("Auth refusal: %d %q", status, got)
	}
}

// TestSecurityHeadersForwardedProto: X-Forwarded-Proto counts only with
// TrustForwardedProto, and only its first value.
func TestSecurityHeadersForwardedProto(t *testing.T) {
	trusting := securityApp(middleware.SecurityHeadersConfig{TrustForwardedProto: true, HSTSIncludeSubdomains: true})
	plain := securityApp(middleware.SecurityHeadersConfig{})
	for _, tc := range []struct {
		app  *fx.App
		xfp  string
		want string
	}{
		{trusting, "https", "max-age=63072000; includeSubDomains"},
		{trusting, " HTTPS , http", "max-age=63072000; includeSubDomains"},
		{trusting, "http, https", ""},
		{trusting, "", ""},
		{plain, "https", ""},
	} {
		_, h := serveRC(t, tc.app, false, "GET", "/r", "X-Forwarded-Proto", tc.xfp)
		if got := h["Strict-Transport-Security"]; got != tc.want {
			t.Errorf("X-Forwarded-Proto %q: HSTS %q, want %q", tc.xfp, got, tc.want)
		}
	}
}

// TestSecurityHeadersConfigured: every header can be changed or left out,
// and a handler can override them.
func TestSecurityHeadersConfigured(t *testing.T) {
	app := securityApp(middleware.SecurityHeadersConfig{
		HSTSMaxAge:                400 * 24 * time.Hour,
		HSTSIncludeSubdomains:     true,
		HSTSPreload:               true,
		ContentSecurityPolicy:     "-",
		FrameOptions:              "sameorigin",
		ReferrerPolicy:            "no-referrer",
		CrossOriginOpenerPolicy:   "same-origin",
		CrossOriginResourcePolicy: "same-site",
	})
	_, h := serveRC(t, app, true, "GET", "/r")
	want := []string{
		"Cross-Origin-Opener-Policy: same-origin",
		"Cross-Origin-Resource-Policy: same-site",
		"Referrer-Policy: no-referrer",
		"Strict-Transport-Security: max-age=34560000; includeSubDomains; preload",
		"X-Content-Type-Options: nosniff",
		"X-Frame-Options: SAMEORIGIN",
	}
	if got := securityOnly(h); !slices.Equal(got, want) {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}

	app = securityApp(middleware.SecurityHeadersConfig{HSTSMaxAge: -1, FrameOptions: "-", ReferrerPolicy: "-"})
	_, h = serveRC(t, app, true, "GET", "/r")
	want = []string{"Content-Security-Policy: default-src 'none'; frame-ancestors 'none'", "X-Content-Type-Options: nosniff"}
	if got := securityOnly(h); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	_, h = serveRC(t, app, true, "GET", "/page")
	if got := h["Content-Security-Policy"]; got != "default-src 'self'" {
		t.Fatalf("handler override: %q", got)
	}
}

// TestSecurityHeadersConfigErrors: invalid configurations panic at
// construction, listing every problem.
func TestSecurityHeadersConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  middleware.SecurityHeadersConfig
		want []string
	}{
		{middleware.SecurityHeadersConfig{HSTSPreload: true}, []string{"HSTSPreload requires HSTSIncludeSubdomains"}},
		{middleware.SecurityHeadersConfig{HSTSPreload: true, HSTSIncludeSubdomains: true, HSTSMaxAge: 30 * 24 * time.Hour},
			[]string{"HSTSPreload requires"}},
		{middleware.SecurityHeadersConfig{HSTSMaxAge: -1, HSTSIncludeSubdomains: true}, []string{"need HSTS"}},
		{middleware.SecurityHeadersConfig{
			FrameOptions:              "ALLOW-FROM https://x.test",
			ContentSecurityPolicy:     "default-src 'none'\r\nSet-Cookie: a=b",
			ReferrerPolicy:            "no-referer",
			CrossOriginOpenerPolicy:   "same_origin",
			CrossOriginResourcePolicy: "none",
		}, []string{"FrameOptions", "ContentSecurityPolicy", "ReferrerPolicy", "CrossOriginOpenerPolicy", "CrossOriginResourcePolicy"}},
	} {
		assertConfigPanic(t, "middleware.SecurityHeaders: ", tc.cfg, func() { middleware.SecurityHeaders(tc.cfg) }, tc.want)
	}
}

func getR(rc *fasthttp.RequestCtx) { rc.Request.SetRequestURI("/r") }

// BenchmarkSecurityHeadersBaseline is the route without the middleware.
func BenchmarkSecurityHeadersBaseline(b *testing.B) {
	benchRequest(b, benchCORSApp(), getR, 200)
}

// BenchmarkSecurityHeaders is a plain HTTP request with the defaults (four
// headers).
func BenchmarkSecurityHeaders(b *testing.B) {
	benchRequest(b, benchCORSApp(middleware.SecurityHeaders(middleware.SecurityHeadersConfig{})), getR, 200)
}

// BenchmarkSecurityHeadersTLS adds Strict-Transport-Security.
func BenchmarkSecurityHeadersTLS(b *testing.B) {
	benchRequest(b, benchCORSApp(middleware.SecurityHeaders(middleware.SecurityHeadersConfig{})), func(rc *fasthttp.RequestCtx) {
		rc.Init2(tlsConn{}, nil, false)
		getR(rc)
	}, 200)
}
