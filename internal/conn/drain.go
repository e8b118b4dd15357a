package conn

import (
	"context"
	"io"
	"net"
	"sync"
	"time"
)

// Draining close. Once the listener is closed (the server is shutting
// down, or handing its socket to a new process), fasthttp closes each
// idle keep-alive connection, and each busy one after its response (sent
// with Connection: close). A plain close races with a client that is
// sending its next request on the idle connection at that moment: the
// request reaches a socket that is closed, or sits unread in it, and the
// kernel answers with RST, which the client sees as "connection reset by
// peer" instead of a clean end it can retry. Under a replacement at load
// that was a dozen resets in five hand-offs (TestDeployHandOff).
//
// So, from the listener's Close on, a connection's Close half-closes it
// (FIN: the client reads a clean end of stream), reads and discards what
// the client still sends until the client closes its side, and only then
// closes the socket; within the lingering bounds (lingerBytes,
// lingerTimeout: 1 MiB, 1 s). A request that raced the close is never
// served: the serving goroutine's Read returns end of stream once Close
// has been called (limitConn.Read), so no handler runs for a request whose
// answer could not be sent; the client, which received no byte of an
// answer, sends it again on a new connection (net/http does so for
// idempotent requests and those with an Idempotency-Key).
//
// Cost: nothing before the listener is closed but one atomic load per
// Read (limitConn.Read) and one per Close; Accept is unchanged.
// BenchmarkServedRead, 6 interleaved runs each on a shared 2-core
// machine: 27.3 ns/op min, 28.8 median without the load; 28.0 min, 30.4
// median with it (within the noise). After the listener's Close, a goroutine per closed connection for
// about one round trip (at most lingerTimeout). The shutdown waits for
// these closes (WaitDrained), within its own bound.

// drainClose closes c the draining way (above) on its own goroutine and
// releases its slot when done.
func (l *limitListener) drainClose(c *limitConn) {
	l.drains.add()
	go func() {
		defer l.drains.done()
		defer c.release()
		raw := c.Conn
		defer raw.Close()
		_ = raw.SetDeadline(time.Now().Add(lingerTimeout)) // hands the phases over (deadline.go)
		if cw, ok := raw.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_, _ = io.CopyN(io.Discard, raw, lingerBytes) // until EOF, the deadline or the bound
	}()
}

// WaitDrained waits, within ctx, until every connection of ln (a Listener
// from NewListener, possibly wrapped in a type with Unwrap) closed the
// draining way has finished closing. It returns ctx's error when ctx
// ended first; for another listener it returns nil at once.
func WaitDrained(ctx context.Context, ln net.Listener) error {
	l := limitListenerOf(ln)
	if l == nil {
		return nil
	}
	select {
	case <-l.drains.idle():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// limitListenerOf is the Listener from NewListener that ln is or wraps
// (through Unwrap), or nil.
func limitListenerOf(ln net.Listener) *limitListener {
	for {
		if l, ok := ln.(*limitListener); ok {
			return l
		}
		u, ok := ln.(interface{ Unwrap() net.Listener })
		if !ok {
			return nil
		}
		ln = u.Unwrap()
	}
}

// Reads bounded by the shutdown. A request whose head has been read is in
// flight: a shutdown lets it arrive whole and answers it. But a body that
// stops short of its Content-Length (a client gone quiet, a miscounted
// upload) would hold its connection until ReadTimeout (10 s by default),
// and a shutdown bounded by a shorter grace period ended with the request
// unanswered: no byte of a response, the connection closed when the
// process exited, and the shutdown reporting requests still running.
//
// EndReadsBy bounds every read of ln's connections by deadline: reads in
// progress (their socket deadline is moved, which wakes a blocked read)
// and those of phases that begin later. A read still waiting then fails
// with a timeout, which the server answers as a request not received in
// time (fx: 408 FX_REQUEST_TIMEOUT, Connection: close). A connection handed
// over (hijacked) keeps its own deadlines. For a listener not from
// NewListener it does nothing. Cost: a walk of the open connections, each
// a lock and at most one deadline move; nothing before it is called but
// the list's two locks per connection (Accept) and an atomic load per
// phase change.
func EndReadsBy(ln net.Listener, deadline time.Time) {
	l := limitListenerOf(ln)
	if l == nil {
		return
	}
	n := deadlineNanos(deadline)
	if n == 0 {
		n = 1 // 0 means no bound
	}
	l.readsBy.Store(n)
	l.connsMu.Lock()
	defer l.connsMu.Unlock()
	l.conns.Each(func(c *limitConn) {
		if tc, ok := c.Conn.(*timeoutConn); ok {
			tc.endReadsBy(n)
		}
	})
}

// drainCount counts the draining closes in progress. Unlike a
// sync.WaitGroup it may be waited on while closes start (a shutdown waits
// while fasthttp is still closing connections), and a wait can give up
// with its context without leaving a goroutine behind.
type drainCount struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0; nil while n is 0
}

// closedChan is the idle channel of a count at 0.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (d *drainCount) add() {
	d.mu.Lock()
	if d.n == 0 {
		d.zero = make(chan struct{})
	}
	d.n++
	d.mu.Unlock()
}

func (d *drainCount) done() {
	d.mu.Lock()
	d.n--
	if d.n == 0 {
		close(d.zero)
		d.zero = nil
	}
	d.mu.Unlock()
}

// idle returns a channel closed once no draining close is in progress.
func (d *drainCount) idle() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n == 0 {
		return closedChan
	}
	return d.zero
}
