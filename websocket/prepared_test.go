package websocket_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/websocket"
)

// TestPreparedMessageReachesEveryPeerWhole: one prepared frame sent to
// several connections arrives whole at each, whether it was written at
// once or waited in the send queue of a peer that was not reading yet
// (its frames cut by a full socket buffer, then finished by the writer);
// sending it to a peer that keeps up allocates nothing.
func TestPreparedMessageReachesEveryPeerWhole(t *testing.T) {
	var mu sync.Mutex
	var conns []*websocket.Conn
	s := serve(t, func(app *fx.App) {
		app.Get("/sub", websocket.New(func(c *websocket.Conn) error {
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					return nil
				}
			}
		}))
	})
	const peers, rounds = 3, 40
	clients := make([]interface {
		ReadMessage() (int, []byte, error)
	}, peers)
	for i := range clients {
		// One at a time, so that conns[i] is the server's side of
		// clients[i] (the ticks below go to conns[0] and are read from
		// clients[0]).
		clients[i] = s.dial(t, "/sub", nil)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			mu.Lock()
			n := len(conns)
			mu.Unlock()
			if n == i+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d peers connected", n, i+1)
			}
		}
	}
	big := []byte(strings.Repeat("p", 200<<10)) // several frames fill a socket buffer: some wait in the queue
	pm, err := websocket.NewPreparedMessage(websocket.BinaryMessage, big)
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < rounds; r++ { // nobody reads yet
		for _, c := range conns {
			if err := c.WritePreparedMessage(pm); err != nil {
				t.Fatalf("round %d: %v", r, err)
			}
		}
	}
	for i, cl := range clients {
		for r := 0; r < rounds; r++ {
			if _, p, err := cl.ReadMessage(); err != nil || !bytes.Equal(p, big) {
				t.Fatalf("peer %d, message %d: %d bytes, %v", i, r, len(p), err)
			}
		}
	}

	small, _ := websocket.NewPreparedMessage(websocket.TextMessage, []byte("tick"))
	done := make(chan struct{})
	go func() { // the peer keeps up
		defer close(done)
		for r := 0; r < 101; r++ {
			if _, p, err := clients[0].ReadMessage(); err != nil || string(p) != "tick" {
				t.Errorf("tick %d: %q, %v", r, p, err)
				return
			}
		}
	}()
	if a := testing.AllocsPerRun(100, func() { _ = conns[0].WritePreparedMessage(small) }); a != 0 && !raceEnabled {
		t.Errorf("WritePreparedMessage: %v allocations; want 0", a)
	}
	<-done
}

func TestNewPreparedMessageRefusesAControlType(t *testing.T) {
	if _, err := websocket.NewPreparedMessage(9, nil); err == nil {
		t.Error("a ping type was accepted")
	}
}
