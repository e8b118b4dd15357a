package websocket_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// rawConn is a WebSocket client written by hand over a TCP connection,
// so that tests can misbehave in ways a real client library never does:
// stop reading, vanish, cut a frame in half.
type rawConn struct {
	net.Conn
	br *bufio.Reader
}

// rawDial opens a TCP connection to addr and completes the handshake
// for path; frames, if any, are sent in the same write as the
// handshake, before its answer.
func rawDial(addr, path string, frames ...[]byte) (*rawConn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
	if _, err := c.Write(append([]byte(req), bytes.Join(frames, nil)...)); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReader(c)
	status, err := br.ReadString('\n')
	if err != nil {
		c.Close()
		return nil, err
	}
	if !strings.HasPrefix(status, "HTTP/1.1 101") {
		c.Close()
		return nil, fmt.Errorf("handshake answered %q", status)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			c.Close()
			return nil, err
		}
		if line == "\r\n" {
			break
		}
	}
	_ = c.SetDeadline(time.Time{})
	return &rawConn{Conn: c, br: br}, nil
}

// frame returns a masked client frame (RFC 6455, section 5.2).
func frame(op byte, payload []byte) []byte {
	b := []byte{0x80 | op}
	n := len(payload)
	switch {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	mask := [4]byte{1, 2, 3, 4}
	b = append(b, mask[:]...)
	for i, p := range payload {
		b = append(b, p^mask[i%4])
	}
	return b
}

// closeFrame is a client close frame with code.
func closeFrame(code int) []byte {
	return frame(0x8, []byte{byte(code >> 8), byte(code)})
}

// send writes a text message.
func (c *rawConn) send(msg string) error {
	_, err := c.Write(frame(0x1, []byte(msg)))
	return err
}

// next reads one server frame: its opcode and payload.
func (c *rawConn) next() (op byte, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(c.br, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(c.br, b[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(c.br, b[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	payload = make([]byte, n)
	_, err = io.ReadFull(c.br, payload)
	return h[0] & 0x0f, payload, err
}

// awaitClose reads frames until the server's close frame and returns its
// code; it answers the close, as a client must.
func (c *rawConn) awaitClose() (int, error) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		op, p, err := c.next()
		if err != nil {
			return 0, err
		}
		if op == 0x8 {
			if len(p) < 2 {
				return 0, errors.New("close frame without a code")
			}
			code := int(binary.BigEndian.Uint16(p))
			_, _ = c.Write(closeFrame(code))
			return code, nil
		}
	}
}
