package fx

import (
	"bufio"
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestEveryEndFinishes: every way a request ends leaves through the one
// finishing step (App.finish), so each gets all three of its parts: the
// OnResponse observer sees it exactly once with its code, the compression
// step runs (with MinSize 1 a body gets Vary: Accept-Encoding), and once
// Shutdown has begun the connection is closed after it. Before finish,
// transport errors and ServeError skipped compression and the router's
// redirects and ServeError skipped the close.
func TestEveryEndFinishes(t *testing.T) {
	t.Parallel()
	const accept = "Host: x\r\nAccept-Encoding: gzip\r\n"
	cases := []struct {
		name   string
		app    func() *App // nil: newFinishApp(Config{})
		req    string
		status int
		code   string
		body   bool // the response has a body: the compression step marks it
	}{
		{"route", nil, "GET /ok HTTP/1.1\r\n" + accept + "\r\n", 200, "", true},
		{"route error through the boundary", nil, "GET /fail HTTP/1.1\r\n" + accept + "\r\n", 418, "APP_TEAPOT", true},
		{"404 without a Ctx", nil, "GET /nope HTTP/1.1\r\n" + accept + "\r\n", 404, codeNotFound, true},
		{"404 through the middleware", func() *App {
			a := newFinishApp(Config{})
			a.Use(func(c *Ctx, next Next) error { return next() })
			return a
		}, "GET /nope HTTP/1.1\r\n" + accept + "\r\n", 404, codeNotFound, true},
		{"refused path", nil, "GET /a%2fb HTTP/1.1\r\n" + accept + "\r\n", 400, codeBadRequest, true},
		{"router redirect", func() *App {
			return newFinishApp(Config{RedirectTrailingSlash: true})
		}, "GET /ok/ HTTP/1.1\r\n" + accept + "\r\n", 301, "", false},
		{"transport error", func() *App {
			return newFinishApp(Config{BodyLimit: 8})
		}, "POST /ok HTTP/1.1\r\n" + accept + "Content-Length: 20\r\n\r\n01234567890123456789", 413, codePayloadTooLarge, true},
		{"failed boot", func() *App {
			a := newFinishApp(Config{})
			a.Get("/broken", nil)
			return a
		}, "GET /ok HTTP/1.1\r\n" + accept + "\r\n", 500, codeRouteHandlerRequired, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := newFinishApp(Config{})
			if tc.app != nil {
				a = tc.app()
			}
			seen := countObserved(a)
			_ = a.Boot()
			a.life.stop.begin(phaseDraining) // as Shutdown does first
			out, err := a.TestRaw(nil, []byte(tc.req))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), nil)
			if err != nil {
				t.Fatalf("%v in %q", err, out)
			}
			resp.Body.Close()
			checkFinished(t, resp.StatusCode, resp.Close, resp.Header.Get("Vary"), tc.status, tc.body)
			if n, code := seen(); n != 1 || code != tc.code {
				t.Errorf("observed %d times, last code %q; want once, %q", n, code, tc.code)
			}
		})
	}
	t.Run("ServeError", func(t *testing.T) {
		t.Parallel()
		a := newFinishApp(Config{})
		seen := countObserved(a)
		_ = a.Boot()
		a.life.stop.begin(phaseDraining)
		var rc fasthttp.RequestCtx
		rc.Request.Header.Set("Accept-Encoding", "gzip")
		a.ServeError(&rc, NewError(502, "APP_UPSTREAM", "upstream failed", nil))
		h := &rc.Response.Header
		checkFinished(t, rc.Response.StatusCode(), rc.Response.ConnectionClose(), string(h.Peek("Vary")), 502, true)
		if n, code := seen(); n != 1 || code != "APP_UPSTREAM" {
			t.Errorf("observed %d times, last code %q; want once, APP_UPSTREAM", n, code)
		}
	})
}

// newFinishApp is an App with routes /ok and /fail (a 418), compression
// of every body (MinSize 1), a silent logger and cfg's other fields.
func newFinishApp(cfg Config) *App {
	cfg.Compression = &CompressionConfig{MinSize: 1}
	cfg.Logger = slog.New(slog.DiscardHandler)
	a := New(cfg)
	a.Get("/ok", func(c *Ctx) error { return c.String(200, strings.Repeat("ok ", 50)) })
	a.Get("/fail", func(c *Ctx) error { return NewError(418, "APP_TEAPOT", "short and stout", nil) })
	return a
}

// countObserved registers an observer on a and returns how many requests
// it saw and the last one's ErrorCode.
func countObserved(a *App) func() (int64, string) {
	var n atomic.Int64
	var code atomic.Value
	code.Store("")
	a.OnResponse(func(c *Ctx) {
		n.Add(1)
		code.Store(c.ErrorCode())
	})
	return func() (int64, string) { return n.Load(), code.Load().(string) }
}

// checkFinished checks the status and the marks of the finishing step on
// a response: Connection: close (Shutdown has begun) and, for a response
// with a body, the Vary the compression step adds.
func checkFinished(t *testing.T, status int, closed bool, vary string, wantStatus int, body bool) {
	t.Helper()
	if status != wantStatus {
		t.Errorf("status %d, want %d", status, wantStatus)
	}
	if !closed {
		t.Error("no Connection: close: the response was not finished while stopping")
	}
	if body && !strings.Contains(vary, "Accept-Encoding") {
		t.Errorf("Vary %q: the compression step did not run", vary)
	}
}
