package websocket

import (
	"bytes"
	"testing"

	ws "github.com/fasthttp/websocket"
)

// A peer that pings without reading gets one pong waiting, for its latest
// ping, however many it sends while the write side is busy: the waiting
// control frames stay bounded.
func TestWaitingPongIsReplaced(t *testing.T) {
	c := &Conn{}
	c.writing = true // the write side is held: control frames wait
	for i := range 10000 {
		c.sendControl(appendFrame(nil, ws.PongMessage, []byte{byte(i)}))
	}
	ping := appendFrame(nil, ws.PingMessage, nil)
	c.sendControl(ping)
	last := appendFrame(nil, ws.PongMessage, []byte("last"))
	c.sendControl(last)
	if len(c.ctrl) != 2 {
		t.Fatalf("%d control frames waiting, want 2 (one pong, the ping)", len(c.ctrl))
	}
	if !bytes.Equal(c.ctrl[0], last) || !bytes.Equal(c.ctrl[1], ping) {
		t.Fatalf("waiting frames %q, want the latest pong then the ping", c.ctrl)
	}
}
