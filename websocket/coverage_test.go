package websocket_test

import (
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/health"
	"github.com/fxhq/fx/websocket"
)

// Full contract coverage in memory for an App with a WebSocket route and
// a readiness probe: fxtest's WebSocket counts the 101, and
// Client.BeginShutdown lets Do send what is answered only during
// Shutdown (readiness's 503, the route's 503 to a handshake).
func TestFxtestFullCoverageWithAWebSocketRoute(t *testing.T) {
	app := fx.New()
	app.Route(websocket.Route("/chat", func(c *websocket.Conn) error {
		_, _, err := c.ReadMessage()
		if err != nil {
			return nil
		}
		return nil
	}, websocket.Config{Origins: []string{"https://chat.example"}}))
	health.New().Register(app)
	c := fxtest.New(t, app, fxtest.Strict(), fxtest.RequireFullCoverage())

	handshake := func(r *fxtest.Request) *fxtest.Request {
		return r.Header("Connection", "Upgrade").Header("Upgrade", "websocket").
			Header("Sec-WebSocket-Version", "13").Header("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	}
	ws := c.Get("/chat").Header("Origin", "https://chat.example").WebSocket()
	ws.Close(1000, "")
	c.Get("/chat").Do().AssertError(426, "FX_UPGRADE_REQUIRED")
	handshake(c.Get("/chat")).Header("Origin", "https://evil.example").Do().AssertError(403, "FX_FORBIDDEN")
	c.Get("/chat").Header("Connection", "Upgrade").Header("Upgrade", "websocket").Do().AssertError(400, "FX_BAD_REQUEST")
	c.Get("/livez").Do().AssertStatus(200)
	c.Get("/readyz").Do().AssertStatus(200)

	c.BeginShutdown()
	c.Get("/readyz").Do().AssertError(503, "FX_SERVICE_UNAVAILABLE")
	handshake(c.Get("/chat")).Header("Origin", "https://chat.example").Do().AssertError(503, "FX_SERVICE_UNAVAILABLE")
	if cov := c.Coverage(); !cov.Full() {
		t.Errorf("coverage: %s", cov)
	}
}
