package websocket_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/websocket"
	gws "github.com/gorilla/websocket"
)

// observed is what an OnResponse observer saw of one request.
type observed struct {
	status   int
	code     string
	route    string
	duration time.Duration
	attrs    map[string]any
	tenant   string
}

// A connection is one request to the App's observers: seen once, when it
// ends, with status 101, the whole connection's duration, the close
// reason of an error outcome as its code, and the connection's figures in
// its log attributes; the access log writes one line for it.
func TestConnectionIsObservedOnceAtItsEnd(t *testing.T) {
	seen := make(chan observed, 2)
	access := &kittest.LogBuffer{}
	s := serve(t, func(app *fx.App) {
		app.OnResponse(middleware.AccessLog(middleware.AccessLogConfig{Logger: slog.New(slog.NewJSONHandler(access, nil))}))
		app.OnResponse(func(c *fx.Ctx) {
			o := observed{status: c.Status(), code: c.ErrorCode(), route: c.Route(), duration: c.Duration(), attrs: map[string]any{}}
			for _, a := range c.LogAttrs() {
				o.attrs[a.Key] = a.Value.Any()
			}
			o.tenant, _ = middleware.TenantFrom(c)
			seen <- o
		})
		app.Use(middleware.Tenant(middleware.TenantConfig{}))
		app.Get("/chat/:room", websocket.New(echoUntil("quit", fx.NewCatalogError(fx.ErrorCodes.Forbidden, "no more"))))
	})
	c := s.dial(t, "/chat/go", map[string][]string{"X-Tenant-Id": {"acme"}})
	for _, m := range []string{"a", "bc"} {
		_ = c.WriteMessage(gws.TextMessage, []byte(m))
		if _, _, err := c.ReadMessage(); err != nil {
			t.Fatal(err)
		}
	}
	if early := len(seen); early != 0 {
		t.Fatalf("observed %d times while the connection is open; want 0 (observed at its end)", early)
	}
	time.Sleep(30 * time.Millisecond)
	_ = c.WriteMessage(gws.TextMessage, []byte("quit"))
	if code, reason := closeOf(t, c); code != 4403 || reason != "FX_FORBIDDEN" {
		t.Fatalf("close %d %q", code, reason)
	}
	o := kittest.Within(t, seen, "the connection's observation")
	time.Sleep(50 * time.Millisecond) // a second observation would show now
	if again := len(seen); again != 0 {
		t.Fatalf("observed %d more times; want once", again)
	}
	if o.status != 101 || o.code != "FX_FORBIDDEN" || o.route != "/chat/:room" || o.duration < 30*time.Millisecond || o.tenant != "acme" {
		t.Errorf("observed %+v; want 101 FX_FORBIDDEN on /chat/:room, >= 30ms, tenant acme", o)
	}
	want := map[string]any{"ws_close_code": int64(4403), "ws_close_reason": "FX_FORBIDDEN", "ws_closed_by_peer": false,
		"ws_messages_in": int64(3), "ws_messages_out": int64(2), "ws_bytes_in": int64(7), "ws_bytes_out": int64(3)}
	for k, v := range want {
		if o.attrs[k] != v {
			t.Errorf("log attribute %s = %#v; want %#v", k, o.attrs[k], v)
		}
	}
	lines := access.Lines(`"path":"/chat/go"`)
	if len(lines) != 1 {
		t.Fatalf("access log lines for the connection: %q; want one", lines)
	}
	line := kittest.LogRecords(t, lines[0])[0]
	if line["status"] != float64(101) || line["ws_close_code"] != float64(4403) || line["ws_messages_in"] != float64(3) ||
		line["ws_bytes_out"] != float64(3) {
		t.Errorf("access log line: %s", lines[0])
	}
}
