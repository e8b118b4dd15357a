package websocket_test

import (
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/websocket"
)

// fxtest dials a WebSocket route in memory, through the App's middleware,
// and asserts the close code; refusals are tested with Do as envelopes.
func TestFxtestDialsInMemory(t *testing.T) {
	app := fx.New()
	app.Use(middleware.Tenant(middleware.TenantConfig{Required: true}))
	app.Route(websocket.Route("/rooms/:room", func(c *websocket.Conn) error {
		tenant, _ := middleware.TenantFrom(c.Ctx())
		if err := c.WriteMessage(websocket.TextMessage, []byte(tenant+"/"+c.Ctx().Param("room"))); err != nil {
			return err
		}
		for {
			_, p, err := c.ReadMessage()
			if err != nil {
				return nil
			}
			switch string(p) {
			case "bye":
				return nil
			case "who?":
				return fx.NewCatalogError(fx.ErrorCodes.Unauthenticated, "who are you")
			case "boom":
				panic("boom")
			}
			if err := c.WriteMessage(websocket.BinaryMessage, p); err != nil {
				return err
			}
		}
	}))
	c := fxtest.New(t, app)
	c.Get("/rooms/go").Do().AssertError(400, "FX_TENANT_REQUIRED")
	c.Get("/rooms/go").Header("X-Tenant-ID", "acme").Do().AssertError(426, "FX_UPGRADE_REQUIRED")

	ws := c.Get("/rooms/go").Header("X-Tenant-ID", "acme").WebSocket()
	if typ, p := ws.Receive(); typ != fxtest.TextMessage || string(p) != "acme/go" {
		t.Errorf("first message %d %q", typ, p)
	}
	ws.SendBinary([]byte{1, 2, 3})
	if typ, p := ws.Receive(); typ != fxtest.BinaryMessage || string(p) != "\x01\x02\x03" {
		t.Errorf("echo %d %q", typ, p)
	}
	ws.Send("bye")
	ws.AssertClose(1000, "")

	ws = c.Get("/rooms/go").Header("X-Tenant-ID", "acme").WebSocket()
	ws.Send("who?")
	ws.AssertClose(4401, "FX_UNAUTHENTICATED")
	ws = c.Get("/rooms/go").Header("X-Tenant-ID", "acme").WebSocket()
	ws.Send("boom")
	ws.AssertClose(1011, "FX_INTERNAL_ERROR")

	// AssertClose fails a test whose close code differs.
	rec := &kittest.RecordTB{TB: t}
	defer rec.End()
	rec.Run(func(tb testing.TB) {
		ws := fxtest.New(tb, app).Get("/rooms/go").Header("X-Tenant-ID", "acme").WebSocket()
		ws.Send("bye")
		ws.AssertClose(4400, "FX_BAD_REQUEST")
	})
	if errs := rec.Errors(); len(errs) != 1 || !strings.Contains(errs[0], "closed 1000") {
		t.Errorf("AssertClose on a mismatch reported %q", errs)
	}
}
