package websocket_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/websocket"
)

// TestWriteOnTheCallersGoroutine: a message to a peer that keeps up is
// written by the caller, with no copy and no writer goroutine: no
// allocation (over loopback TCP, whose socket buffer takes them all), and
// the peer gets every message whole and in order.
func TestWriteOnTheCallersGoroutine(t *testing.T) {
	const n = 200
	msg := []byte(strings.Repeat("w", 300)) // a 16-bit length header
	allocs := make(chan float64, 1)
	route := func(app *fx.App) {
		app.Get("/w", websocket.New(func(c *websocket.Conn) error {
			if _, _, err := c.ReadMessage(); err != nil { // the peer is reading
				return err
			}
			allocs <- testing.AllocsPerRun(n-1, func() {
				if err := c.WriteMessage(websocket.BinaryMessage, msg); err != nil {
					t.Error(err)
				}
			})
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					return nil
				}
			}
		}))
	}
	check := func(t *testing.T, write func([]byte) error, read func() ([]byte, error)) {
		got := make(chan error, 1)
		go func() { // the peer keeps up: it reads while the handler writes
			for i := 0; i < n; i++ { // AllocsPerRun runs the function once more than asked
				p, err := read()
				if err == nil && !bytes.Equal(p, msg) {
					err = fmt.Errorf("%d bytes", len(p))
				}
				if err != nil {
					got <- fmt.Errorf("message %d: %w", i, err)
					return
				}
			}
			got <- nil
		}()
		if err := write([]byte("go")); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		if a := <-allocs; a != 0 && !raceEnabled {
			t.Errorf("WriteMessage to a peer that keeps up: %v allocations; want 0", a)
		}
	}
	c := serve(t, route).dial(t, "/w", nil)
	check(t, func(p []byte) error { return c.WriteMessage(websocket.BinaryMessage, p) },
		func() ([]byte, error) { _, p, err := c.ReadMessage(); return p, err })
}
