package websocket

import (
	"bufio"
	"bytes"
	"crypto/sha1" //#nosec G505 -- the handshake's accept key (RFC 6455, section 4.2.2)
	"encoding/base64"
	"net"
	"net/http"
	"time"

	ws "github.com/fasthttp/websocket"
)

// sock is the connection the library reads from. It never writes: the
// library's own frames (a pong, the answer to a close, a 1009 or 1002)
// reach fx's write side as control frames, so that one writer frames
// everything the server sends and no frame of the library's can cut into
// one of fx's.
type sock struct {
	net.Conn
	c *Conn // set when the connection starts; before, the handshake's writes pass or are dropped
	// passHandshake: the library writes the 101 (net/http); otherwise
	// fasthttp wrote it and the library's copy is dropped.
	passHandshake bool
}

func (s *sock) Write(p []byte) (int, error) {
	if s.c == nil {
		if s.passHandshake {
			return s.Conn.Write(p)
		}
		return len(p), nil
	}
	s.c.sendControl(bytes.Clone(p))
	return len(p), nil
}

// SetWriteDeadline passes the handshake's; the library's deadline for a
// control frame is fx's writer's business afterwards.
func (s *sock) SetWriteDeadline(t time.Time) error {
	if s.c == nil {
		return s.Conn.SetWriteDeadline(t)
	}
	return nil
}

// SetDeadline sets the read deadline only once the connection runs.
func (s *sock) SetDeadline(t time.Time) error {
	if s.c == nil {
		return s.Conn.SetDeadline(t)
	}
	return s.Conn.SetReadDeadline(t)
}

// adopt makes the library's connection over sk, on a connection whose
// handshake fasthttp answered: the library's net/http upgrader is the
// one way to give it a connection of fx's choosing. Cost: the
// upgrader's few allocations, once per connection.
func (s *server) adopt(sk *sock, key, subprotocol string, readBuffer int) (*ws.Conn, error) {
	hdr := http.Header{
		"Connection":            {"Upgrade"},
		"Upgrade":               {"websocket"},
		"Sec-Websocket-Version": {"13"},
		"Sec-Websocket-Key":     {key},
	}
	var resp http.Header
	if subprotocol != "" {
		resp = http.Header{"Sec-Websocket-Protocol": {subprotocol}}
	}
	up := s.upgrader(readBuffer)
	up.Subprotocols = nil // chosen already: resp carries it
	rw := &hijacked{conn: sk, rw: bufio.NewReadWriter(bufio.NewReaderSize(sk, 16), bufio.NewWriterSize(sk, 16))}
	return up.Upgrade(rw, &http.Request{Method: http.MethodGet, Header: hdr}, resp)
}

// upgrader is the library's upgrader for the route's buffers. It never
// writes with its write buffer (fx frames every write), so the pool it
// is given is never used: no write buffer is allocated per connection.
func (s *server) upgrader(readBuffer int) ws.Upgrader {
	return ws.Upgrader{
		ReadBufferSize:  readBuffer,
		WriteBufferSize: 1,
		WriteBufferPool: unusedPool{},
		Subprotocols:    s.cfg.Subprotocols,
		CheckOrigin:     func(*http.Request) bool { return true }, // checked before, as an envelope
		Error:           func(http.ResponseWriter, *http.Request, int, error) {},
	}
}

// unusedPool is the write buffer pool of a connection that never writes
// through the library.
type unusedPool struct{}

func (unusedPool) Get() any { return nil }
func (unusedPool) Put(any)  {}

// hijacked is the http.ResponseWriter adopt hands the library's upgrader:
// its Hijack returns the connection fasthttp hijacked.
type hijacked struct {
	conn net.Conn
	rw   *bufio.ReadWriter
	hdr  http.Header
}

func (h *hijacked) Header() http.Header {
	if h.hdr == nil {
		h.hdr = http.Header{}
	}
	return h.hdr
}
func (h *hijacked) Write(p []byte) (int, error) { return len(p), nil }
func (h *hijacked) WriteHeader(int)             {}
func (h *hijacked) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return h.conn, h.rw, nil
}

// wrapHijack is the net/http ResponseWriter whose hijacked connection is
// wrapped in a sock (the nethttp adapter's upgrade).
type wrapHijack struct {
	http.ResponseWriter
	sk *sock
}

func (w *wrapHijack) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.sk.Conn = nc
	return w.sk, rw, nil
}

// acceptKey is the Sec-WebSocket-Accept of key (RFC 6455, section 4.2.2).
func acceptKey(key []byte) string {
	h := sha1.New() //#nosec G401 -- required by the protocol
	h.Write(key)
	h.Write([]byte("258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}
