package b41

import (
"github.com/fxhq/fx"
"github.com/fxhq/fx/websocket"
)


//line docs/websocket.md (fragment marker):1
var app = fx.New()
var h = func(c *websocket.Conn) error { return nil }



func _() {
//line docs/websocket.md:160
app.Route(websocket.Route("/rooms/:room", h))
}
