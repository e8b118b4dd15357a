package websocket

import (
	"bufio"
	"bytes"
	"crypto/sha1" //#nosec G505 -- the handshake's accept key (RFC 6455, section 4.2.2)
	"encoding/base64"
	"encoding/binary"
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
//
// It also follows the frames the peer sends, to stop at one the library
// would take although RFC 6455 forbids it, and notes the close frame the
// library sends, so that the connection's outcome is the code that went
// on the wire.
type sock struct {
	net.Conn
	c *Conn // set when the connection starts; before, the library's copy of the 101 is dropped (the transport wrote it)

	scan frameScan // the peer's frames so far (Read)
	bad  error     // the protocolError scan found: every later Read fails with it

	// sentCode and sentReason are the close frame the library wrote last
	// (0: none). The library writes on the goroutine that reads.
	sentCode   int
	sentReason string
}

func (s *sock) Write(p []byte) (int, error) {
	if s.c == nil {
		return len(p), nil
	}
	if len(p) >= 4 && p[0]&0x0f == ws.CloseMessage {
		n := min(int(p[1]&0x7f), len(p)-2) // a server's control frame: unmasked, short length
		s.sentCode, s.sentReason = int(binary.BigEndian.Uint16(p[2:])), string(p[4:2+n])
	}
	s.c.sendControl(bytes.Clone(p))
	return len(p), nil
}

// Read reads what the peer sent, up to the first frame the library would
// accept although RFC 6455 forbids it; from then on it fails with the
// protocolError, which the handler's read returns (the connection is
// closed with 1002). Cost: a frame's header is read in place (byte by
// byte only when a read cuts it), its payload skipped by its length, no
// allocation: 43-86 ns per 32-byte frame on the 2-core machine at a load
// average of 26-32 (BenchmarkFrameScan), where a small message's round
// trip takes a few µs.
func (s *sock) Read(p []byte) (int, error) {
	if s.bad != nil {
		return 0, s.bad
	}
	n, err := s.Conn.Read(p)
	if at, why := s.scan.next(p[:n]); at >= 0 {
		s.bad = protocolError(why)
		if at == 0 {
			return 0, s.bad
		}
		return at, nil
	}
	return n, err
}

// protocolError is a frame of the peer that RFC 6455 forbids and the
// library would accept.
type protocolError string

func (e protocolError) Error() string { return string(e) }

// frameScan follows the frame boundaries of a stream of client frames
// (RFC 6455, section 5.2).
type frameScan struct {
	hdr  [14]byte // the header read so far
	n    int      // its length
	skip uint64   // the current frame's payload bytes still to come
}

// next scans p, the stream's next bytes, and returns the offset in p of
// the first forbidden frame (0 when its header began before p) and what
// is wrong with it, or -1.
func (f *frameScan) next(p []byte) (at int, why string) {
	start := 0
	for i := 0; i < len(p); {
		if f.skip > 0 {
			k := min(uint64(len(p)-i), f.skip)
			i += int(k)
			f.skip -= k
			continue
		}
		if f.n == 0 {
			start = i
			if len(p)-i >= len(f.hdr) { // the whole header is here: read it in place
				n, length, why := frameHeader(p[i:])
				if why != "" {
					return start, why
				}
				i += n
				f.skip = length
				continue
			}
		}
		f.hdr[f.n] = p[i]
		f.n++
		i++
		if f.n < 2 || f.n < headerLen(f.hdr[1]) {
			continue
		}
		f.n = 0
		_, length, why := frameHeader(f.hdr[:])
		if why != "" {
			return start, why
		}
		f.skip = length
	}
	return -1, ""
}

// headerLen is the length of a frame header whose second byte is b1.
func headerLen(b1 byte) int {
	n := 2
	switch b1 & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if b1&0x80 != 0 {
		n += 4 // the mask
	}
	return n
}

// frameHeader reads the frame header at the start of h (h holds it
// whole): its length, the payload's, and what RFC 6455 forbids in it
// that the library accepts ("" when nothing).
func frameHeader(h []byte) (n int, length uint64, why string) {
	n = headerLen(h[1])
	length = uint64(h[1] & 0x7f)
	switch length {
	case 126:
		length = uint64(binary.BigEndian.Uint16(h[2:]))
	case 127:
		length = binary.BigEndian.Uint64(h[2:])
		if length>>63 != 0 {
			return n, 0, "payload length with its most significant bit set"
		}
	}
	if h[0]&0x0f == ws.CloseMessage && length == 1 {
		return n, 0, "close frame with a 1-byte payload"
	}
	return n, length, ""
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
// handshake the transport answered (fasthttp, or the nethttp adapter):
// the library's net/http upgrader is the one way to give it a connection
// of fx's choosing. Cost: the
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
	up := s.upgrader(readBuffer) // the subprotocol is chosen already: resp carries it
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

// acceptKey is the Sec-WebSocket-Accept of key (RFC 6455, section 4.2.2).
func acceptKey(key []byte) string {
	h := sha1.New() //#nosec G401 -- required by the protocol
	h.Write(key)
	h.Write([]byte("258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}
