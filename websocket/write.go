package websocket

import (
	"encoding/binary"
	"errors"
	"net"
	"os"
	"reflect"
	"sync"
	"syscall"
	"time"

	ws "github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp/fasthttputil"
)

// The write side. fx frames and writes every byte the server sends; the
// library only reads (its pongs, close replies and 1009s come to fx as
// control frames, through sock). One writer at a time holds the write
// side (Conn.writing): a caller of WriteMessage that finds it free
// writes the frame on its own goroutine, with an attempt that never
// blocks (one non-blocking write on a TCP connection; on fasthttp's
// in-memory connection, a write that takes the whole frame or nothing).
// Whatever that attempt could not write (the end of a frame a full
// socket buffer cut, or a frame that found the write side taken) waits
// in the connection's queue, and a writer goroutine, started then and
// ending when the queue is empty, writes it with each write bounded by
// Config.WriteTimeout. The end of a frame begun goes first, then control
// frames, then data messages in order: a stalled peer holds only its own
// queue, never the caller.

// outMsg is one queued message: a data message (its payload, framed when
// written), a whole frame (framed: a prepared message, or the close
// frame that ends the queue, typ CloseMessage).
type outMsg struct {
	typ    int
	data   []byte
	n      int  // the payload's length (for the counters)
	framed bool // data is a whole frame
}

// tryKind is how a connection attempts a write that must not block.
type tryKind uint8

const (
	tryNone tryKind = iota // no attempt: every frame goes through the queue
	tryRaw                 // one non-blocking write(2) on the socket
	tryPipe                // fasthttp's in-memory pipe: a write with a passed deadline takes all or nothing
)

// pipeConnType is the type of fasthttp's in-memory connections
// (fasthttputil.InmemoryListener, which fxtest serves WebSockets on).
var pipeConnType = reflect.TypeOf(fasthttputil.NewPipeConns().Conn1())

// setWriteSide sets the connection fx writes to and how it tries a write.
func (c *Conn) setWriteSide(nc net.Conn) {
	// fasthttp's hijacked connection and fx's accepted one wrap the
	// socket: writes go to it directly (a *tls.Conn has no UnsafeConn).
	for i := 0; i < 4; i++ {
		u, ok := nc.(interface{ UnsafeConn() net.Conn })
		if !ok {
			break
		}
		nc = u.UnsafeConn()
	}
	c.out = nc
	switch {
	case reflect.TypeOf(nc) == pipeConnType:
		c.try = tryPipe
	default:
		if sc, ok := nc.(syscall.Conn); ok {
			if rc, err := sc.SyscallConn(); err == nil {
				c.raw, c.try = rc, tryRaw
				c.rawWrite = func(fd uintptr) bool {
					n, err := syscall.Write(int(fd), c.rawP)
					c.rawN, c.rawErr = max(n, 0), err
					return true // one attempt: never wait for the socket
				}
			}
		}
	}
}

// tryWrite writes what of p the connection takes without blocking: n is
// how much, err a failure of the connection (a full socket buffer is
// not one: n is then short).
func (c *Conn) tryWrite(p []byte) (n int, err error) {
	switch c.try {
	case tryRaw:
		c.rawP = p
		err = c.raw.Write(c.rawWrite)
		c.rawP = nil
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return 0, nil // a write deadline passed: the writer sets a new one
			}
			return 0, err
		}
		n, err = c.rawN, c.rawErr
		if err == syscall.EAGAIN || err == syscall.EINTR { // write(2)'s own Errno: no unwrapping
			err = nil
		}
		return n, err
	case tryPipe:
		if !c.pastSet {
			_ = c.out.SetWriteDeadline(pastDeadline)
			c.pastSet = true
		}
		n, err = c.out.Write(p)
		if errors.Is(err, fasthttputil.ErrTimeout) {
			return 0, nil
		}
		return n, err
	}
	return 0, nil
}

// pastDeadline is a deadline already passed: the write or read it is set
// for fails at once.
var pastDeadline = time.Unix(1, 0)

// send writes a data message (payload, framed here) or a prepared frame
// (frame, payload length n): on the caller's goroutine when the write
// side is free, through the queue otherwise.
func (c *Conn) send(typ int, payload, frame []byte, n int) error {
	c.qmu.Lock()
	if c.shutQ {
		c.qmu.Unlock()
		return ErrClosed
	}
	if c.writing || c.try == tryNone {
		if len(c.queue)-c.head >= c.cfg.SendQueue {
			c.qmu.Unlock()
			c.dropWith(ws.ClosePolicyViolation, "send queue full")
			return ErrQueueFull
		}
		m := outMsg{typ: typ, data: frame, n: n, framed: frame != nil}
		if frame == nil {
			m.data = append([]byte(nil), payload...)
		}
		c.queue = append(c.queue, m)
		c.startWriter()
		c.qmu.Unlock()
		return nil
	}
	c.take()
	c.qmu.Unlock()
	var buf *[]byte
	if frame == nil {
		buf = getFrameBuf()
		*buf = appendFrame((*buf)[:0], typ, payload)
		frame = *buf
	}
	err := c.writeInline(frame, n)
	if buf != nil {
		putFrameBuf(buf)
	}
	return err
}

// sendControl sends a control frame (a ping, a pong, a close frame) ahead
// of the queued data messages; frame is kept. Once a close frame was
// sent, nothing more is: a later control frame is dropped.
func (c *Conn) sendControl(frame []byte) {
	c.qmu.Lock()
	if c.closeQueued || c.noWrites || c.dropped.Load() {
		c.qmu.Unlock()
		return
	}
	kind := controlKind(frame)
	if kind == sentClose {
		c.closeQueued = true
	}
	if c.writing || c.try == tryNone {
		c.queueControl(frame)
		c.startWriter()
		c.qmu.Unlock()
		return
	}
	c.take()
	c.qmu.Unlock()
	_ = c.writeInline(frame, kind)
}

// queueControl adds frame to the control frames waiting for the write
// side; qmu is held. A pong replaces one still waiting: a peer that pings
// faster than it reads would otherwise grow the list without bound while
// the writer waits on its full socket, and one pong, for the latest ping,
// answers them all (the protocol allows it).
func (c *Conn) queueControl(frame []byte) {
	if frame[0]&0x0f == ws.PongMessage {
		for i, f := range c.ctrl {
			if f[0]&0x0f == ws.PongMessage {
				c.ctrl[i] = frame
				return
			}
		}
	}
	c.ctrl = append(c.ctrl, frame)
}

// What sent counts, besides a data message's payload length.
const (
	sentControl = -1 // a ping or a pong
	sentClose   = -2 // a close frame
)

// controlKind is sentClose for a close frame, sentControl for another
// control frame (frame is whole: its first byte holds the opcode).
func controlKind(frame []byte) int {
	if frame[0]&0x0f == ws.CloseMessage {
		return sentClose
	}
	return sentControl
}

// take takes the free write side for the caller; qmu is held. One
// holder at a time: writing is the whole record of it (a counter, such as
// a sync.WaitGroup, cost two atomic adds per message written at once).
func (c *Conn) take() { c.writing = true }

// free gives the write side up and wakes the tear-down if it waits for
// that (awaitWriteSide); qmu is held.
func (c *Conn) free() {
	c.writing = false
	if c.freed != nil {
		close(c.freed)
		c.freed = nil
	}
}

// awaitWriteSide ends writing for the tear-down: nothing more is written
// once it returns, and the holder of the write side, if any (the writer
// goroutine, whose writes are bounded by WriteTimeout, or a caller's
// write that does not block), has given it up.
func (c *Conn) awaitWriteSide() {
	c.qmu.Lock()
	c.noWrites = true
	var freed chan struct{}
	if c.writing {
		c.freed = make(chan struct{})
		freed = c.freed
	}
	c.qmu.Unlock()
	if freed != nil {
		<-freed
	}
}

// startWriter starts the writer goroutine unless the write side is
// taken (its holder starts one, if needed, when it is done); qmu is held.
func (c *Conn) startWriter() {
	if !c.writing {
		c.take()
		go c.writer()
	}
}

// writeInline tries frame on the caller's goroutine, which holds the
// write side, and hands the write side on: to a writer goroutine when
// part of frame or anything queued meanwhile is left, else back. n is
// the payload length of a data message, sentControl or sentClose for a
// control frame.
func (c *Conn) writeInline(frame []byte, n int) error {
	k, err := c.tryWrite(frame)
	if err != nil {
		c.drop()
		c.qmu.Lock()
		c.handBack()
		c.qmu.Unlock()
		return ErrClosed
	}
	if k == len(frame) {
		c.sent(n)
	}
	c.qmu.Lock()
	if k < len(frame) {
		c.rest, c.restN = append([]byte(nil), frame[k:]...), n
	}
	c.handBack()
	c.qmu.Unlock()
	return nil
}

// handBack ends a turn at the write side: a writer goroutine takes it
// over when something waits, else it is free again; qmu is held.
func (c *Conn) handBack() {
	if !c.dropped.Load() && (c.rest != nil || len(c.ctrl) > 0 || c.head < len(c.queue)) {
		go c.writer() // inherits the write side
		return
	}
	c.free()
}

// sent counts a written frame: a data message (n, its payload length) or
// a control frame (sentControl, sentClose); after a close frame, the
// peer has CloseTimeout to answer it.
func (c *Conn) sent(n int) {
	if n >= 0 {
		c.msgsOut++
		c.bytesOut += int64(n)
		return
	}
	if n == sentClose {
		c.withSocket(func() { _ = c.ws.SetReadDeadline(time.Now().Add(c.cfg.CloseTimeout)) })
	}
}

// writer writes what waits, each write bounded by WriteTimeout; a failed
// write drops the peer. It ends when nothing waits (the next frame that
// finds the write side free is written by its caller). Once the
// connection is stopped, queued data messages are dropped; the end of a
// frame begun and control frames (the close frame) are still written.
func (c *Conn) writer() {
	var buf *[]byte
	defer func() {
		if buf != nil {
			putFrameBuf(buf)
		}
	}()
	for {
		var frame []byte
		n, isLast := sentControl, false
		c.qmu.Lock()
		switch {
		case c.dropped.Load():
			c.rest, c.ctrl = nil, nil
			c.head = len(c.queue)
			c.idleWriter()
			c.qmu.Unlock()
			return
		case c.rest != nil:
			frame, n = c.rest, c.restN
			c.rest = nil
		case len(c.ctrl) > 0:
			frame = c.ctrl[0]
			n = controlKind(frame)
			c.ctrl[0] = nil
			if c.ctrl = c.ctrl[1:]; len(c.ctrl) == 0 {
				c.ctrl = nil
			}
		case c.head < len(c.queue) && !c.isStopped():
			m := c.queue[c.head]
			c.queue[c.head] = outMsg{}
			c.head++
			if c.head == len(c.queue) {
				c.queue, c.head = c.queue[:0], 0 // reuse the array for the next message
			}
			switch {
			case m.typ == ws.CloseMessage:
				frame, n, isLast = m.data, sentClose, true
			case m.framed:
				frame, n = m.data, m.n
			default:
				if buf == nil {
					buf = getFrameBuf()
				}
				*buf = appendFrame((*buf)[:0], m.typ, m.data)
				frame, n = *buf, len(m.data)
			}
		default:
			c.idleWriter()
			c.qmu.Unlock()
			return
		}
		c.qmu.Unlock()
		c.pastSet = false
		_ = c.out.SetWriteDeadline(time.Now().Add(c.cfg.WriteTimeout))
		if _, err := c.out.Write(frame); err != nil {
			c.drop()
			continue // drop stopped the connection: the next turn ends
		}
		c.sent(n)
		if isLast {
			c.qmu.Lock()
			c.endLast()
			c.qmu.Unlock()
		}
	}
}

// idleWriter frees the write side as the writer ends; qmu is held. A
// burst's queue is not kept by an idle connection, and the write
// deadline is cleared for the next attempt on a caller's goroutine.
func (c *Conn) idleWriter() {
	if cap(c.queue) > keptQueue || c.head != len(c.queue) {
		c.queue = nil
	}
	c.queue, c.head = c.queue[:0], 0
	c.endLast()
	if !c.dropped.Load() && !c.pastSet {
		_ = c.out.SetWriteDeadline(time.Time{})
	}
	c.free()
}

// keptQueue is the largest send queue (in messages) an idle connection
// keeps for its next message: 48 bytes each, against an allocation per
// message of a connection that is written to one message at a time.
const keptQueue = 4

// Frames. A server's frames are not masked (RFC 6455, section 5.1): a
// frame is a header of 2 to 10 bytes and the payload.

// maxHeader is the largest header of a server's frame.
const maxHeader = 10

// appendFrame appends to dst one final, unmasked frame of opcode typ
// carrying payload.
func appendFrame(dst []byte, typ int, payload []byte) []byte {
	dst = append(dst, 0x80|byte(typ))
	switch n := len(payload); {
	case n <= 125:
		dst = append(dst, byte(n))
	case n <= 0xffff:
		dst = append(dst, 126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	default:
		dst = append(dst, 127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	return append(dst, payload...)
}

// framePool recycles the buffers data messages are framed in.
var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// maxPooledFrame is the largest frame buffer kept in framePool.
const maxPooledFrame = 64<<10 + maxHeader

func getFrameBuf() *[]byte { return framePool.Get().(*[]byte) }

func putFrameBuf(b *[]byte) {
	if cap(*b) <= maxPooledFrame {
		framePool.Put(b)
	}
}
