package fx

import (
	"errors"
	"math"
	"net"
	"os"
	"sync"
	"time"
)

// Lazy socket deadlines. With ReadTimeout, WriteTimeout and IdleTimeout
// set (the defaults), fasthttp moves a connection's deadlines three times
// per keep-alive request: the idle deadline before waiting for the next
// request, the read deadline at its first byte, the write deadline before
// the response. Each move is a runtime timer update under the socket's
// poll lock, ~1 µs for the three on a loaded 2-core machine
// (bench: BenchmarkDeadlineRefresh), several times the handler's own cost
// for a small response (BenchmarkService/hello/fx); it is what the
// timeouts cost fx against raw fasthttp and Fiber, which set none.
//
// deadlineConn makes the moves that push a deadline later free: it only
// records the deadline wanted, and leaves the earlier one armed. When the
// armed deadline fires, Read or Write sees the timeout, arms the deadline
// now wanted if that is later, and retries, so the caller never sees a
// timeout before the deadline it asked for. A move to an earlier deadline
// is armed at once, so no deadline ever fires later than asked: a slow
// client is cut off exactly as before (ReadTimeout from the first byte of
// a request). Steady keep-alive traffic then costs one re-arm per
// connection per ReadTimeout (10 s) instead of three per request.
//
// Only plain TCP connections are wrapped: a tls.Conn whose write timed out
// is unusable afterwards, so an early timeout there could not be retried.

// noDeadline is the zero time.Time (no deadline) as a number: later than
// every deadline.
const noDeadline = math.MaxInt64

// deadlineConn is a net.Conn whose deadlines are moved later lazily (see
// above). The mutex orders the setters (fasthttp's connection goroutine,
// a handler's RequestCtx.SetWriteDeadline) against the re-arm after a
// timeout, so that the armed deadline is never later than the wanted one.
type deadlineConn struct {
	net.Conn
	mu     sync.Mutex
	rd, wd deadlineState
}

type deadlineState struct {
	want  int64 // unix ns of the deadline last asked for; noDeadline for none
	armed int64 // unix ns of the deadline the socket has; noDeadline for none
}

func newDeadlineConn(c net.Conn) *deadlineConn {
	return &deadlineConn{Conn: c,
		rd: deadlineState{noDeadline, noDeadline}, wd: deadlineState{noDeadline, noDeadline}}
}

func deadlineNanos(t time.Time) int64 {
	if t.IsZero() {
		return noDeadline
	}
	return t.UnixNano()
}

// set records t as the wanted deadline, and arms it only when it comes
// before the armed one. Cost when it does not: a lock and two stores.
func (c *deadlineConn) set(s *deadlineState, read bool, t time.Time) error {
	w := deadlineNanos(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	s.want = w
	if w >= s.armed {
		return nil // the armed deadline fires first; Read/Write re-arm then
	}
	s.armed = w
	if read {
		return c.Conn.SetReadDeadline(t)
	}
	return c.Conn.SetWriteDeadline(t)
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error  { return c.set(&c.rd, true, t) }
func (c *deadlineConn) SetWriteDeadline(t time.Time) error { return c.set(&c.wd, false, t) }

func (c *deadlineConn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

// rearm is called after err from a read or write: when err is a deadline
// that fired before the one wanted, it arms the wanted one and reports
// true (retry).
func (c *deadlineConn) rearm(s *deadlineState, read bool, err error) bool {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.want <= s.armed {
		return false // the deadline asked for has passed: a real timeout
	}
	var t time.Time
	if s.want != noDeadline {
		t = time.Unix(0, s.want)
		if !t.After(time.Now()) {
			return false
		}
	}
	s.armed = s.want
	var serr error
	if read {
		serr = c.Conn.SetReadDeadline(t)
	} else {
		serr = c.Conn.SetWriteDeadline(t)
	}
	return serr == nil
}

func (c *deadlineConn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if n > 0 || err == nil || !c.rearm(&c.rd, true, err) {
			return n, err
		}
	}
}

func (c *deadlineConn) Write(p []byte) (int, error) {
	written := 0
	for {
		n, err := c.Conn.Write(p[written:])
		written += n
		if err == nil || !c.rearm(&c.wd, false, err) {
			return written, err
		}
	}
}

// CloseWrite half-closes the connection when the wrapped one can (the
// lingering close uses it, linger.go).
func (c *deadlineConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}
