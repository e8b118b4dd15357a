// Command handoffd is the server the WebSocket hand-off test
// (handoff_linux_test.go) replaces while WebSockets are open and HTTP
// requests run: a real process, handed on by SIGHUP as a user would.
//
//	GET /ws    a WebSocket: sends this process's PID, then echoes every message
//	GET /work  200 "ok" with X-Pid: this process's PID
//
// Environment: ADDR (where to listen), PIDFILE (RunConfig.PIDFile).
// SIGHUP hands the socket on to a new process (App.HandOff); the old one
// then shuts down, closing its WebSockets with 1001.
package main

import (
	"context"
	"log"
	"log/slog"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/websocket"
)

func main() {
	app := fx.New(fx.Config{Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	pid := strconv.Itoa(os.Getpid())

	app.Get("/ws", websocket.New(func(c *websocket.Conn) error {
		if err := c.WriteMessage(websocket.TextMessage, []byte(pid)); err != nil {
			return nil
		}
		for {
			t, msg, err := c.ReadMessage()
			if err != nil {
				return nil // the peer left, or Shutdown sent 1001
			}
			if err := c.WriteMessage(t, msg); err != nil {
				return nil
			}
		}
	}))
	app.Get("/work", func(c *fx.Ctx) error {
		c.SetHeader("X-Pid", pid)
		return c.Send(200, "text/plain", []byte("ok"))
	})

	rc := fx.RunConfig{PIDFile: os.Getenv("PIDFILE"), GracePeriod: 10 * time.Second, HandOffSignal: syscall.SIGHUP}
	if err := app.Run(context.Background(), os.Getenv("ADDR"), rc); err != nil {
		log.Fatal(err)
	}
}
