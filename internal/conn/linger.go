package conn

import (
	"net"
	"time"
)

// Lingering close. When fasthttp answers a request it could not read (413
// body too large, 431 headers too large, 408 read timeout, 400 malformed)
// it writes the envelope and closes the connection at once, usually with
// request bytes still unread: the client is still sending its body. Closing
// a socket with unread input makes the kernel send RST instead of FIN, and
// the client's kernel then drops the response it had not read yet: before
// this guard a net/http client POSTing 8 MiB to a 1 MiB BodyLimit got the
// 413 envelope 3-8 times in 20, otherwise "connection reset by peer".
//
// So such a connection is closed the way RFC 9112 9.6 asks: the write side
// is half-closed (FIN after the response), what the client still sends is
// read and discarded, and the socket is closed when the client closes its
// side, or at the bounds, whichever comes first:
//
//   - lingerBytes (1 MiB) read and discarded at most. Past it fx stops
//     reading: TCP flow control then pauses the client, which costs
//     nothing, and fx waits out the time bound without reading.
//   - lingerTimeout (1 s) after the close at most, then the socket is closed
//     whatever the client does. A client that keeps trickling is cut off
//     there. 1 s is twice net/http's rstAvoidanceDelay (500 ms): ample for
//     any round trip, short enough that the cost stays small.
//
// Cost: one goroutine (~8 KiB of stack) and one descriptor per lingering
// connection for at most lingerTimeout; the fasthttp worker is released at
// once. A lingering connection keeps its Config.Limit slot until it
// is really closed, so a flood of oversized uploads is bounded by the
// connection limit and cannot exhaust descriptors. Shutdown closes
// lingering connections at once.
//
// A connection refused for over-concurrency lingers the same way with
// tighter bounds (refuseLinger, 64 KiB), because it holds a descriptor
// beyond the connection limit; refusalBudget bounds how many do at once.
const (
	lingerTimeout = time.Second
	lingerBytes   = 1 << 20

	refuseHeadWait = 500 * time.Millisecond
	refuseLinger   = 500 * time.Millisecond
	refuseBytes    = 64 << 10
)

// linger half-closes c, reads and discards up to maxBytes until the client
// closes or deadline passes (after maxBytes, waits without reading), then
// closes c and calls release. It runs on its own goroutine.
func (l *limitListener) linger(c net.Conn, deadline time.Time, maxBytes int, release func()) {
	defer release()
	defer c.Close()
	if !l.track(c) {
		return // the listener is closed: Shutdown does not wait for lingerers
	}
	defer l.untrack(c)
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite() // best effort; the read below is bounded either way
	}
	if c.SetReadDeadline(deadline) != nil {
		return
	}
	var buf [4 << 10]byte
	for n := 0; n < maxBytes; {
		m, err := c.Read(buf[:])
		n += m
		if err != nil {
			return // EOF (the client is done), the deadline, or Shutdown
		}
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-t.C:
	case <-l.closing:
	}
}

// track registers a lingering connection so that Close can end it; it
// reports false when the listener is already closed.
func (l *limitListener) track(c net.Conn) bool {
	l.lingerMu.Lock()
	defer l.lingerMu.Unlock()
	if l.stopped {
		return false
	}
	if l.lingering == nil {
		l.lingering = make(map[net.Conn]struct{})
	}
	l.lingering[c] = struct{}{}
	return true
}

func (l *limitListener) untrack(c net.Conn) {
	l.lingerMu.Lock()
	delete(l.lingering, c)
	l.lingerMu.Unlock()
}

// Close closes the listener, ends any accept backoff, and closes the
// lingering connections (Shutdown must not wait up to lingerTimeout for
// clients that already have their error response).
func (l *limitListener) Close() error {
	l.draining.Store(true) // from now on connections close the draining way (drain.go)
	err := l.Listener.Close()
	l.lingerMu.Lock()
	if !l.stopped {
		l.stopped = true
		close(l.closing)
	}
	for c := range l.lingering {
		c.Close()
	}
	l.lingerMu.Unlock()
	return err
}
