package websocket_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/nethttp"
	"github.com/fxhq/fx/websocket"
)

// boundaryApp serves the same two failures, a panic and a plain error,
// from an HTTP route (/http/...) and from a WebSocket handler after its
// 101 (/ws/...), behind a middleware that adds a log attribute.
func boundaryApp(development bool) (*fx.App, *kittest.LogBuffer) {
	logs := &kittest.LogBuffer{}
	app := fx.New(fx.Config{Development: development, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		c.AddLogAttrs(slog.String("tenant", "acme"))
		return next()
	})
	fail := func(how string) error {
		if how == "panic" {
			panic("boom")
		}
		return errors.New("database down")
	}
	for _, how := range []string{"panic", "error"} {
		app.Get("/http/"+how, func(c *fx.Ctx) error { return fail(how) })
		app.Get("/ws/"+how, websocket.New(func(c *websocket.Conn) error { return fail(how) },
			websocket.Config{CloseTimeout: time.Second}))
	}
	return app, logs
}

// A WebSocket handler's failure after its 101 is logged by the core's
// error boundary as the same failure of an HTTP handler is, on both
// transports: one line, the same message, level and keys (a panic's
// value under "panic" and its stack, as one string in production and one
// element per frame in Development; a plain error under "error"), the
// request's original path and its log attributes; the WebSocket line has
// the connection's attributes (ws_close_code ...) besides. The observers
// see FX_INTERNAL_ERROR for both.
func TestFailureAfterUpgradeIsLoggedAsAnHTTPFailure(t *testing.T) {
	for _, development := range []bool{false, true} {
		for _, transport := range []string{"fasthttp", "nethttp"} {
			t.Run(fmt.Sprintf("%s/development=%v", transport, development), func(t *testing.T) {
				app, logs := boundaryApp(development)
				codes := make(chan string, 4)
				app.OnResponse(func(c *fx.Ctx) { codes <- c.ErrorCode() })
				var addr string
				if transport == "fasthttp" {
					addr = fxtest.Serve(t, app)
				} else {
					srv := httptest.NewServer(nethttp.Handler(app))
					t.Cleanup(func() {
						_ = app.Shutdown()
						srv.Close()
					})
					addr = strings.TrimPrefix(srv.URL, "http://")
				}
				s := &served{app: app, addr: addr, logs: logs}
				for _, how := range []string{"panic", "error"} {
					if status, _, _ := s.get(t, "/http/"+how, nil); status != 500 {
						t.Fatalf("/http/%s: status %d; want 500", how, status)
					}
					if code := kittest.Within(t, codes, "the HTTP failure's observation"); code != "FX_INTERNAL_ERROR" {
						t.Errorf("/http/%s observed %q; want FX_INTERNAL_ERROR", how, code)
					}
					c, err := rawDial(addr, "/ws/"+how)
					if err != nil {
						t.Fatal(err)
					}
					if code, err := c.awaitClose(); err != nil || code != 1011 {
						t.Fatalf("/ws/%s: close %d, %v; want 1011", how, code, err)
					}
					c.Close()
					if code := kittest.Within(t, codes, "the connection's observation"); code != "FX_INTERNAL_ERROR" {
						t.Errorf("/ws/%s observed %q; want FX_INTERNAL_ERROR", how, code)
					}
					h, w := failureRecord(t, logs, "/http/"+how), failureRecord(t, logs, "/ws/"+how)
					compareFailureRecords(t, how, development, h, w)
				}
			})
		}
	}
}

// failureRecord returns the one error-level record logged for path.
func failureRecord(t *testing.T, logs *kittest.LogBuffer, path string) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, r := range logs.Records(t) {
		if r["path"] == path && r["level"] == "ERROR" {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("error records for %s: %v; want one\n%s", path, found, logs.String())
	}
	return found[0]
}

// compareFailureRecords holds w, the WebSocket failure's record, to h,
// the HTTP one's.
func compareFailureRecords(t *testing.T, how string, development bool, h, w map[string]any) {
	t.Helper()
	var hk, wk, wsOnly []string
	for k := range h {
		hk = append(hk, k)
	}
	for k := range w {
		if strings.HasPrefix(k, "ws_") {
			wsOnly = append(wsOnly, k)
			continue
		}
		wk = append(wk, k)
	}
	slices.Sort(hk)
	slices.Sort(wk)
	if !slices.Equal(hk, wk) {
		t.Errorf("%s: keys of the WebSocket failure's line %v; want the HTTP one's %v", how, wk, hk)
	}
	if w["ws_close_code"] != float64(1011) || len(wsOnly) < 2 {
		t.Errorf("%s: the connection's attributes on its line: %v; want ws_close_code 1011 and the rest", how, wsOnly)
	}
	for _, k := range []string{"msg", "method", "code", "tenant", "panic", "error"} {
		if fmt.Sprint(h[k]) != fmt.Sprint(w[k]) {
			t.Errorf("%s: %s %q on the WebSocket line; %q on the HTTP one", how, k, w[k], h[k])
		}
	}
	if w["msg"] != "fx: request failed" || w["code"] != "FX_INTERNAL_ERROR" || w["tenant"] != "acme" {
		t.Errorf("%s: the WebSocket line: %v", how, w)
	}
	if how == "error" {
		if w["error"] != "database down" || w["panic"] != nil || w["stack"] != nil {
			t.Errorf("error: the WebSocket line %v; want error \"database down\" and no stack", w)
		}
		return
	}
	if w["panic"] != "boom" {
		t.Errorf("panic: the WebSocket line's panic %q; want \"boom\"", w["panic"])
	}
	switch hs, ws := h["stack"], w["stack"]; {
	case development:
		frames, ok := ws.([]any)
		if _, hok := hs.([]any); !ok || !hok || len(frames) == 0 {
			t.Fatalf("panic: stacks %T and %T in Development; want arrays of frames", hs, ws)
		}
		if first := fmt.Sprint(frames[0]); !strings.Contains(first, "boundaryApp") {
			t.Errorf("panic: the WebSocket stack starts at %q; want the panicking function", first)
		}
	default:
		if s, ok := ws.(string); !ok || !strings.Contains(s, "boundaryApp") {
			t.Errorf("panic: the WebSocket stack %T %.80v; want one string naming the panicking function", ws, ws)
		}
		if _, ok := hs.(string); !ok {
			t.Errorf("panic: the HTTP stack is %T; want one string", hs)
		}
	}
}
