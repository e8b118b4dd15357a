package websocket

import "fmt"

// PreparedMessage is a data message framed once, to be sent to many
// connections: a broadcast. Conn.WritePreparedMessage sends its frame as
// it is, with no framing and no copy per connection, whether the frame
// is written at once or waits in a connection's send queue (the queue
// holds the frame itself). A PreparedMessage is never modified: it may
// be sent from any number of goroutines at once.
type PreparedMessage struct {
	frame []byte
	n     int // the payload's length
}

// NewPreparedMessage frames data as one message of messageType
// (TextMessage or BinaryMessage); data is copied and may be reused at
// once. Cost: one allocation of len(data) plus 2 to 10 bytes.
func NewPreparedMessage(messageType int, data []byte) (*PreparedMessage, error) {
	if messageType != TextMessage && messageType != BinaryMessage {
		return nil, fmt.Errorf("websocket: NewPreparedMessage given message type %d; want TextMessage or BinaryMessage", messageType)
	}
	return &PreparedMessage{frame: appendFrame(make([]byte, 0, maxHeader+len(data)), messageType, data), n: len(data)}, nil
}

// WritePreparedMessage sends pm as WriteMessage sends a message (on the
// caller's goroutine when the connection takes it at once, otherwise
// through the send queue, with the same errors). Cost: no allocation,
// queued or not.
func (c *Conn) WritePreparedMessage(pm *PreparedMessage) error {
	if c.stopped.Load() || c.closing.Load() {
		return ErrClosed
	}
	return c.send(0, nil, pm.frame, pm.n)
}
