package websocket_test

import (
	"fmt"
	"net"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/websocket"
	gws "github.com/gorilla/websocket"
)

// An echo route: every message goes back; a handler that returns nil
// closes with 1000, one that returns an *fx.Error with 4000 + its status.
func ExampleNew() {
	app := fx.New()
	app.Get("/echo", websocket.New(func(c *websocket.Conn) error {
		for {
			t, msg, err := c.ReadMessage()
			if err != nil {
				return nil // the peer left
			}
			if string(msg) == "quit" {
				return fx.NewError(429, "APP_ENOUGH", "enough for today")
			}
			if err := c.WriteMessage(t, msg); err != nil {
				return nil
			}
		}
	}, websocket.Config{ReadLimit: 4 << 10, PingInterval: 20 * time.Second}))

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go app.Serve(ln) // ends with Shutdown
	defer app.Shutdown()

	conn, _, err := gws.DefaultDialer.Dial("ws://"+ln.Addr().String()+"/echo", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	_ = conn.WriteMessage(gws.TextMessage, []byte("hello"))
	_, msg, _ := conn.ReadMessage()
	fmt.Println(string(msg))
	_ = conn.WriteMessage(gws.TextMessage, []byte("quit"))
	_, _, err = conn.ReadMessage()
	fmt.Println(err)
	// Output:
	// hello
	// websocket: close 4429: APP_ENOUGH
}

// Route documents the WebSocket route in the OpenAPI document: its 101
// and the envelopes it answers before the upgrade.
func ExampleRoute() {
	app := fx.New()
	app.Route(websocket.Route("/rooms/:room", func(c *websocket.Conn) error {
		return c.WriteJSON(map[string]string{"room": c.Ctx().Param("room")})
	}))
	_ = app.Boot()
	routes, _ := app.Routes()
	for _, r := range routes {
		fmt.Println(r.Method, r.Path, len(r.Errors))
	}
	// Output:
	// GET /rooms/:room 4
}
