package websocket_test

import (
	"fmt"
	"net"
	"sync"
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

// A broadcast: the message is framed once, and each subscriber's
// connection sends that frame (written at once, or queued for a peer
// that is behind, never blocking the loop).
func ExampleNewPreparedMessage() {
	var mu sync.Mutex
	subs := map[*websocket.Conn]struct{}{}
	app := fx.New()
	app.Get("/feed", websocket.New(func(c *websocket.Conn) error {
		mu.Lock()
		subs[c] = struct{}{}
		mu.Unlock()
		defer func() { mu.Lock(); delete(subs, c); mu.Unlock() }()
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return nil
			}
		}
	}))
	broadcast := func(msg []byte) {
		pm, err := websocket.NewPreparedMessage(websocket.TextMessage, msg)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for c := range subs {
			_ = c.WritePreparedMessage(pm) // an error ends only that subscriber
		}
	}

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go app.Serve(ln)
	defer app.Shutdown()
	conn, _, err := gws.DefaultDialer.Dial("ws://"+ln.Addr().String()+"/feed", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	for n := 0; n == 0; time.Sleep(time.Millisecond) {
		mu.Lock()
		n = len(subs)
		mu.Unlock()
	}
	broadcast([]byte("price: 42"))
	_, msg, _ := conn.ReadMessage()
	fmt.Println(string(msg))
	// Output:
	// price: 42
}
