package b42

import (
"github.com/fxhq/fx"
"github.com/fxhq/fx/fxtest"
"github.com/fxhq/fx/websocket"
"testing"
)


//line docs/websocket.md (fragment marker):1
var t *testing.T
var app = fx.New()
var _ = websocket.TextMessage



func _() {
//line docs/websocket.md:175
c := fxtest.New(t, app)
//line docs/websocket.md:176
c.Get("/rooms/go").Do().AssertError(426, "FX_UPGRADE_REQUIRED")
//line docs/websocket.md:177
ws := c.Get("/rooms/go?name=ada").WebSocket()
//line docs/websocket.md:178
ws.Send(`{"text":"hello"}`)
//line docs/websocket.md:179
_, msg := ws.Receive()
//line docs/websocket.md:180
_ = msg
//line docs/websocket.md:181
ws.Send("bye")
//line docs/websocket.md:182
ws.AssertClose(1000, "")
	_ = c
	_ = ws
	_ = msg
}
