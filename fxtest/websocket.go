package fxtest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp/fasthttputil"
)

// WebSocket is a WebSocket connection to the App, in memory (see
// Request.WebSocket): a small client of its own (RFC 6455 framing), so
// that fxtest needs no WebSocket library. Its methods fail the test on a
// transport error; every read is bounded by 5 seconds.
type WebSocket struct {
	t    testing.TB
	conn net.Conn
	br   *bufio.Reader
	wmu  sync.Mutex
	// closeSent: Close sent the client's close frame; the server's close
	// is then its answer, not to be answered again (RFC 6455, 5.5.1), and
	// the server may already have closed the connection.
	closeSent bool
}

// The message types of Send and Receive (RFC 6455, section 11.8).
const (
	TextMessage   = 1
	BinaryMessage = 2
)

// WebSocket sends the request as a WebSocket handshake (a GET with the
// Upgrade headers Connection, Upgrade, Sec-WebSocket-Version and
// Sec-WebSocket-Key added to the ones set, each unless the test set it
// itself) to the App served on an
// in-memory listener, and returns the connection. A handshake the App
// refuses fails the test with its status and envelope: test refusals with
// Do, which sends the same request without the upgrade, or with the
// Upgrade headers set by hand. In strict mode the 101 is held to the
// route's declared responses and counted in Coverage, as Do's responses
// are. The connection is closed at the end of the test, before the App
// shuts down.
//
// Cost: the first WebSocket of a Client starts serving the App on an
// in-memory listener (fasthttputil.InmemoryListener: a goroutine, no
// port); each connection is a pipe pair and the server's goroutines for
// it.
func (r *Request) WebSocket() *WebSocket {
	c := r.c
	c.t.Helper()
	if r.err != "" {
		c.t.Fatalf("fxtest: %s", r.err)
	}
	ln := c.inmemory()
	conn, err := ln.Dial()
	if err != nil {
		c.t.Fatalf("fxtest: WebSocket %s: dialing in memory: %v", r.target, err)
	}
	c.t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	b.WriteString("GET " + r.uri() + " HTTP/1.1\r\nHost: " + r.host + "\r\n")
	for _, h := range [...][2]string{{"Connection", "Upgrade"}, {"Upgrade", "websocket"},
		{"Sec-WebSocket-Version", "13"}, {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}} {
		if !r.hasHeader(h[0]) { // one the test set replaces the default
			b.WriteString(h[0] + ": " + h[1] + "\r\n")
		}
	}
	for i := 0; i+1 < len(r.headers); i += 2 {
		b.WriteString(r.headers[i] + ": " + r.headers[i+1] + "\r\n")
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(conn, b.String()); err != nil {
		c.t.Fatalf("fxtest: WebSocket %s: writing the handshake: %v", r.target, err)
	}
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil {
		c.t.Fatalf("fxtest: WebSocket %s: reading the handshake's answer: %v", r.target, err)
	}
	if !strings.HasPrefix(status, "HTTP/1.1 101 ") {
		rest, _ := io.ReadAll(io.LimitReader(br, 4096))
		c.t.Fatalf("fxtest: WebSocket %s: the handshake was answered %s%s", r.target, status, rest)
	}
	head := []byte(status)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			c.t.Fatalf("fxtest: WebSocket %s: reading the handshake's answer: %v", r.target, err)
		}
		if line == "\r\n" {
			break
		}
		head = append(head, line...)
	}
	_ = conn.SetDeadline(time.Time{})
	if c.contract != nil { // the 101 is a declared response: held to it, counted in Coverage
		c.contract.checkResponse(&Response{t: c.t, method: http.MethodGet, uri: r.uri(), Status: http.StatusSwitchingProtocols, head: head})
	}
	return &WebSocket{t: c.t, conn: conn, br: br}
}

// inmemory returns the Client's in-memory listener, serving the App,
// started on first use.
func (c *Client) inmemory() *fasthttputil.InmemoryListener {
	c.lnOnce.Do(func() {
		c.ln = fasthttputil.NewInmemoryListener()
		go func() { _ = c.app.Serve(c.ln) }() // ends with the App's Shutdown
	})
	return c.ln
}

// Send sends a text message.
func (w *WebSocket) Send(text string) { w.write(TextMessage, []byte(text)) }

// SendBinary sends a binary message.
func (w *WebSocket) SendBinary(data []byte) { w.write(BinaryMessage, data) }

// Close sends a close frame with code and reason (the server answers it,
// and its handler's read ends with that code).
func (w *WebSocket) Close(code int, reason string) {
	w.write(0x8, append([]byte{byte(code >> 8), byte(code)}, reason...))
	w.wmu.Lock()
	w.closeSent = true
	w.wmu.Unlock()
}

// Receive returns the next data message (its type and payload), answering
// pings meanwhile; a close frame or a transport error fails the test.
func (w *WebSocket) Receive() (messageType int, data []byte) {
	w.t.Helper()
	op, p, err := w.next()
	if err != nil {
		w.t.Fatalf("fxtest: WebSocket Receive: %v", err)
	}
	if op == 0x8 {
		code, reason := closePayload(p)
		w.t.Fatalf("fxtest: WebSocket Receive: the server closed the connection: %d %q", code, reason)
	}
	return int(op), p
}

// AssertClose reads until the server's close frame, answers it, and fails
// the test unless its code and reason are code and reason: 1000 "" for a
// handler that returned nil, 4000 + status and the code of an *fx.Error
// (4403 "FX_FORBIDDEN"), 1011 "FX_INTERNAL_ERROR" for a panic. Data
// messages before the close are skipped. It returns the WebSocket.
func (w *WebSocket) AssertClose(code int, reason string) *WebSocket {
	w.t.Helper()
	for {
		op, p, err := w.next()
		if err != nil {
			w.t.Errorf("fxtest: WebSocket: no close frame (want %d %q): %v", code, reason, err)
			return w
		}
		if op != 0x8 {
			continue
		}
		got, text := closePayload(p)
		w.wmu.Lock()
		answer := !w.closeSent
		w.wmu.Unlock()
		if answer {
			w.write(0x8, p[:min(len(p), 2)])
		}
		if got != code || text != reason {
			w.t.Errorf("fxtest: WebSocket closed %d %q; want %d %q", got, text, code, reason)
		}
		return w
	}
}

// closePayload splits a close frame's payload into code and reason (1005,
// "no status", when it has none).
func closePayload(p []byte) (int, string) {
	if len(p) < 2 {
		return 1005, ""
	}
	return int(binary.BigEndian.Uint16(p)), string(p[2:])
}

// write sends one masked frame (RFC 6455, section 5.3: a client masks).
func (w *WebSocket) write(op byte, payload []byte) {
	w.t.Helper()
	b := make([]byte, 0, len(payload)+14)
	b = append(b, 0x80|op)
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	mask := [4]byte{0x5a, 0x17, 0xc3, 0x2e}
	b = append(b, mask[:]...)
	for i, c := range payload {
		b = append(b, c^mask[i&3])
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	_ = w.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := w.conn.Write(b); err != nil {
		w.t.Fatalf("fxtest: WebSocket write: %v", err)
	}
}

// next returns the next message or close frame, reassembling fragments
// and answering pings.
func (w *WebSocket) next() (op byte, payload []byte, err error) {
	_ = w.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var msgOp byte
	var msg []byte
	for {
		fin, fop, p, err := w.frame()
		if err != nil {
			return 0, nil, err
		}
		switch fop {
		case 0x9: // ping
			w.write(0xA, p)
			continue
		case 0xA: // pong
			continue
		case 0x8:
			return fop, p, nil
		case 0x0: // continuation
			if msgOp == 0 {
				return 0, nil, errors.New("continuation frame without a message")
			}
			msg = append(msg, p...)
		default:
			msgOp, msg = fop, p
		}
		if fin {
			return msgOp, msg, nil
		}
	}
}

// frame reads one frame from the server (unmasked).
func (w *WebSocket) frame() (fin bool, op byte, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(w.br, h[:]); err != nil {
		return false, 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(w.br, b[:]); err != nil {
			return false, 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(w.br, b[:]); err != nil {
			return false, 0, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > 64<<20 {
		return false, 0, nil, fmt.Errorf("a frame of %d bytes", n)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(w.br, payload); err != nil {
		return false, 0, nil, err
	}
	return h[0]&0x80 != 0, h[0] & 0x0f, payload, nil
}
