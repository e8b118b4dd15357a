package bench

import (
	"net"
	"sync"

	"github.com/fxhq/fx"
	fxws "github.com/fxhq/fx/websocket"
	fiberws "github.com/gofiber/contrib/websocket"
	"github.com/gofiber/fiber/v2"
)

// WebSocket servers for the benchmarks beside Fiber's WebSocket
// middleware (github.com/gofiber/contrib/websocket on Fiber v2): each
// serves /echo (every message sent back) and /sub (a subscriber of a
// broadcast: the connection joins the server's hub and reads until it
// closes), each the way its documentation shows.

// WSServer is one framework's WebSocket server.
type WSServer struct {
	Name string
	// Serve serves ln until Shutdown.
	Serve    func(ln net.Listener) error
	Shutdown func() error
	// Broadcast sends msg to every subscriber and reports how many it
	// was sent to.
	Broadcast func(msg []byte) int
	// Subscribers is the number of connections on /sub.
	Subscribers func() int
}

// NewFxWS is the fx server: websocket.New with its defaults; a
// broadcast sends one prepared message (framed once) to every
// subscriber, as docs/websocket.md shows.
func NewFxWS() *WSServer { return newFxWS(fx.Config{}) }

// NewFxWSHeader4K is NewFxWS on an App whose header limit is 4 KiB:
// fasthttp's default, which Fiber keeps (fx's default is 8 KiB). It
// shows that the limit no longer costs an idle connection anything:
// fasthttp's read buffer, which the limit sizes, goes back to the
// server at the upgrade.
func NewFxWSHeader4K() *WSServer { return newFxWS(fx.Config{HeaderLimit: 4 << 10}) }

func newFxWS(cfg fx.Config) *WSServer {
	app := fx.New(cfg)
	var mu sync.Mutex
	subs := map[*fxws.Conn]struct{}{}
	app.Get("/echo", fxws.New(func(c *fxws.Conn) error {
		for {
			t, p, err := c.ReadMessage()
			if err != nil {
				return nil
			}
			if err := c.WriteMessage(t, p); err != nil {
				return nil
			}
		}
	}))
	app.Get("/sub", fxws.New(func(c *fxws.Conn) error {
		mu.Lock()
		subs[c] = struct{}{}
		mu.Unlock()
		defer func() {
			mu.Lock()
			delete(subs, c)
			mu.Unlock()
		}()
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return nil
			}
		}
	}))
	return &WSServer{
		Name:     "fx",
		Serve:    app.Serve,
		Shutdown: app.Shutdown,
		Broadcast: func(msg []byte) int {
			pm, err := fxws.NewPreparedMessage(fxws.TextMessage, msg)
			if err != nil {
				return 0
			}
			mu.Lock()
			defer mu.Unlock()
			for c := range subs {
				_ = c.WritePreparedMessage(pm) // written at once, or queued for a peer that is behind
			}
			return len(subs)
		},
		Subscribers: func() int { mu.Lock(); defer mu.Unlock(); return len(subs) },
	}
}

// NewFiberWS is the Fiber v2 server: the upgrade check middleware and
// websocket.New, as the middleware's README shows. A broadcast writes to
// each connection in turn (gorilla's Conn allows one writer at a time:
// the broadcaster is that writer).
func NewFiberWS() *WSServer {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	var mu sync.Mutex
	subs := map[*fiberws.Conn]struct{}{}
	app.Use(func(c *fiber.Ctx) error {
		if fiberws.IsWebSocketUpgrade(c) {
			return c.Next()
		}
		return fiber.ErrUpgradeRequired
	})
	app.Get("/echo", fiberws.New(func(c *fiberws.Conn) {
		for {
			t, p, err := c.ReadMessage()
			if err != nil {
				return
			}
			if err := c.WriteMessage(t, p); err != nil {
				return
			}
		}
	}))
	app.Get("/sub", fiberws.New(func(c *fiberws.Conn) {
		mu.Lock()
		subs[c] = struct{}{}
		mu.Unlock()
		defer func() {
			mu.Lock()
			delete(subs, c)
			mu.Unlock()
		}()
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}))
	return &WSServer{
		Name:     "fiber",
		Serve:    app.Listener,
		Shutdown: app.Shutdown,
		Broadcast: func(msg []byte) int {
			mu.Lock()
			defer mu.Unlock()
			for c := range subs {
				_ = c.WriteMessage(fiberws.TextMessage, msg)
			}
			return len(subs)
		},
		Subscribers: func() int { mu.Lock(); defer mu.Unlock(); return len(subs) },
	}
}
