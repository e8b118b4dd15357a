package nethttp

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

type leakKey struct{}

// TestPooledContextIsClean sends a request that dirties every part of the
// pooled RequestCtx, then plain requests that check nothing of it shows,
// and proves that the RequestCtx was actually reused (so the check is not
// vacuous).
func TestPooledContextIsClean(t *testing.T) {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	var dirtyRC *fasthttp.RequestCtx
	reused := false
	var problems []string
	app.Post("/dirty", func(c *fx.Ctx) error {
		rc := c.RequestCtx()
		dirtyRC = rc
		rc.SetUserValue(leakKey{}, "secret")
		rc.SetUserValue("leak", "secret")
		rc.Response.Header.Set("X-Leak", "secret")
		rc.Response.Header.Add("Set-Cookie", "leak=secret")
		rc.Response.Header.SetContentEncoding("gzip")
		return c.JSON(201, map[string]string{"body": string(c.Body())})
	})
	app.Get("/clean", func(c *fx.Ctx) error {
		rc := c.RequestCtx()
		if rc == dirtyRC {
			reused = true
		}
		check := func(what string, bad bool) {
			if bad {
				problems = append(problems, what)
			}
		}
		check("user value", rc.UserValue(leakKey{}) != nil || rc.UserValue("leak") != nil)
		check("request header", len(rc.Request.Header.Peek("X-Secret")) > 0)
		check("request cookie", len(rc.Request.Header.Cookie("s")) > 0)
		check("request body", len(c.Body()) > 0 || rc.Request.Header.ContentLength() > 0)
		check("query", len(rc.QueryArgs().Peek("token")) > 0)
		check("response header", len(rc.Response.Header.Peek("X-Leak")) > 0 || len(rc.Response.Header.ContentEncoding()) > 0)
		check("response cookie", len(rc.Response.Header.PeekCookie("leak")) > 0)
		check("response body", len(rc.Response.Body()) > 0)
		check("status", rc.Response.StatusCode() != 200)
		check("TLS", rc.IsTLS() || rc.TLSConnectionState() != nil)
		check("remote address", rc.RemoteAddr().String() != "192.0.2.9:1234")
		check("scheme", string(rc.URI().Scheme()) != "http")
		return c.String(200, "clean")
	})
	h := Handler(app)
	for i := range 20 {
		req := httptest.NewRequest("POST", "https://example.com/dirty?token=t", io.NopCloser(strings.NewReader(`secret body`)))
		req.Header.Set("X-Secret", "1")
		req.Header.Set("Cookie", "s=1")
		req.TLS = &tls.ConnectionState{Version: tls.VersionTLS13}
		req.RemoteAddr = "[2001:db8::1]:443"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 201 || w.Body.String() != `{"body":"secret body"}` {
			t.Fatalf("dirty request %d: %d %q", i, w.Code, w.Body)
		}

		req = httptest.NewRequest("GET", "/clean", nil)
		req.RemoteAddr = "192.0.2.9:1234"
		w = httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 || w.Body.String() != "clean" || w.Header().Get("X-Leak") != "" ||
			w.Header().Get("Set-Cookie") != "" || w.Header().Get("Content-Encoding") != "" {
			t.Fatalf("clean request %d: %d %q %v", i, w.Code, w.Body, w.Header())
		}
	}
	if len(problems) > 0 {
		t.Errorf("seen by a later request: %q", problems)
	}
	if !reused {
		t.Skip("the pool never handed the same RequestCtx back; nothing was proven")
	}
}

// TestRemoteAddrForms: net/http's RemoteAddr in its usual and unusual
// forms.
func TestRemoteAddrForms(t *testing.T) {
	e := newExchange()
	for in, want := range map[string]string{
		"127.0.0.1:80":         "127.0.0.1:80",
		"[::ffff:10.0.0.1]:81": "10.0.0.1:81",
		"[fe80::1%eth0]:82":    "[fe80::1%eth0]:82",
		"@":                    "@",
		"":                     "0.0.0.0:0",
	} {
		if got := e.remoteAddr(in).String(); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}
