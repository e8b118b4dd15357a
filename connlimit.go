package fx

import (
	"bytes"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Descriptor budget. Every connection costs the process one file
// descriptor, and RLIMIT_NOFILE bounds them. When accept(2) cannot get one
// it fails with EMFILE; fasthttp treats any non-timeout accept error as
// fatal, so before this guard ~20k idle connections against the default
// config made Serve return and the program exit. The guard has three parts:
//
//   - the default Config.Concurrency is clamped below the limit, so that the
//     connection limit (and its 503 envelope) fires before the kernel does;
//   - the refusals in flight (each a descriptor held while the 503 is
//     written) are bounded by a share of the same budget;
//   - temporary accept errors are retried with a backoff (limitListener.
//     Accept), as net/http does, and never end Serve.
//
// The rule, with N the soft RLIMIT_NOFILE read when the App is created:
// fdReserve (64) descriptors are left to the process (stdio, listeners,
// log files, DNS); of the rest, 3/4 are for served connections, 1/8 for
// refusals in flight (at most 1024) and 1/8 stay free for the
// application's own files and outbound connections. N = 1024 gives
// Concurrency 720; N = 1 048 576 gives the cap DefaultConcurrency. A
// Concurrency set explicitly is not clamped: past the limit, accept
// retries until descriptors free up.

const fdReserve = 64

// descriptorBudget is the soft RLIMIT_NOFILE minus fdReserve, or 0 when the
// platform has no such limit or it is too large to matter.
func descriptorBudget() int {
	n := nofileLimit()
	if n == 0 || n > 1<<30 {
		return 0
	}
	return max(int(n)-fdReserve, 0)
}

// defaultConcurrency is Config.Concurrency's default under the current
// descriptor limit (see above). Cost: one getrlimit system call, at New.
func defaultConcurrency() int {
	b := descriptorBudget()
	if b == 0 {
		return DefaultConcurrency
	}
	return min(max(b*3/4, 8), DefaultConcurrency)
}

// maxRejecting bounds the goroutines (and descriptors) that answer refused
// connections; past it, refused connections are closed without a response
// (under such a flood, writing responses would itself be the attack's
// amplifier, and each would hold a descriptor).
const maxRejecting = 1024

// refusalBudget is the most refusals in flight under the current
// descriptor limit: min(maxRejecting, budget/8), at least 4.
func refusalBudget() int64 {
	b := descriptorBudget()
	if b == 0 {
		return maxRejecting
	}
	return int64(min(max(b/8, 4), maxRejecting))
}

// Accept backoff, as net/http's Server.Serve: 5 ms doubling to 1 s.
const (
	acceptRetryMin = 5 * time.Millisecond
	acceptRetryMax = time.Second
)

// temporaryAcceptError reports whether an accept error is worth retrying:
// descriptor or memory exhaustion, a connection aborted or reset before it
// was accepted, an interrupted call, a listener deadline.
func temporaryAcceptError(err error) bool {
	for _, e := range [...]error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN, syscall.EPROTO} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// acceptLog reports failed accepts at most once per second, with the number
// of failures it kept quiet since the last report (a descriptor-exhausted
// server fails accept hundreds of times a second; logging each would add
// the log's I/O to the overload).
type acceptLog struct {
	logger     *slog.Logger
	last       atomic.Int64 // unix nanoseconds of the last report
	suppressed atomic.Int64
}

func (l *acceptLog) report(err error, retry time.Duration) {
	now := time.Now().UnixNano()
	last := l.last.Load()
	if now-last < int64(time.Second) || !l.last.CompareAndSwap(last, now) {
		l.suppressed.Add(1)
		return
	}
	if l.logger != nil {
		l.logger.Warn("fx: accepting a connection failed; retrying",
			"err", err, "retry_in", retry, "suppressed", l.suppressed.Swap(0))
	}
}

// acceptBackoff waits d before the next accept, or less if done is closed
// (Shutdown does not wait out a backoff).
func acceptBackoff(d time.Duration, done <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	}
}

// nextAcceptDelay is the delay after d: 5 ms, then doubling, at most 1 s.
func nextAcceptDelay(d time.Duration) time.Duration {
	if d == 0 {
		return acceptRetryMin
	}
	return min(2*d, acceptRetryMax)
}

// Over-concurrency. fasthttp's own Server.Concurrency limit answers with a
// raw text/plain 503, outside the contract, so the App enforces
// Config.Concurrency itself, one step earlier: Serve wraps the listener in a
// limitListener that counts open connections (one atomic add per accepted
// connection, one per close; nothing per request). A connection accepted
// beyond the limit is answered
//
//	HTTP/1.1 503 Service Unavailable
//	{"error":{"code":"FX_SERVICE_UNAVAILABLE","message":"..."}}
//
// with Connection: close, and closed. fasthttp's limit is set above ours
// (fasthttpConcurrency) so that it never fires first: fasthttp releases a
// worker only after the connection's Close, so for an instant a closed
// connection still holds a fasthttp worker.

// fasthttpConcurrency is the backstop given to fasthttp for an App limit n.
func fasthttpConcurrency(n int) int {
	return n + max(n/4, 64)
}

// overloadMessage is the message of the over-concurrency 503.
const overloadMessage = "The server is serving its maximum number of connections; retry later"

// overloadResponse is the complete 503 written to a connection refused for
// over-concurrency, built once. It has no Date header: one built once would
// carry the process start time (a 5xx may omit Date, RFC 9110 6.6.1).
var overloadResponse = func() []byte {
	body := AppendEnvelope(nil, &Error{Code: CodeServiceUnavailable, Message: overloadMessage})
	b := []byte("HTTP/1.1 503 Service Unavailable\r\n" +
		"Content-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n" +
		"Retry-After: 1\r\n" +
		"Connection: close\r\n\r\n")
	return append(b, body...)
}()

// limitListener counts the connections it hands out and refuses those
// beyond limit with the 503 envelope. It also retries temporary accept
// errors (Accept, with acceptBackoff above) and tracks lingering
// connections (linger.go).
type limitListener struct {
	net.Listener
	limit        int64
	open         atomic.Int64
	rejecting    atomic.Int64
	maxRejecting int64 // refusalBudget at Serve
	acceptLog    acceptLog
	closing      chan struct{} // closed by Close: ends backoffs and lingering
	timeouts     connTimeouts  // the phase bounds of its connections (deadline.go)
	observer     *App          // OnResponse sees refusals; nil without observers (observe.go)
	lineLimit    int           // the request-line record's size (framing.go)

	lingerMu  sync.Mutex
	stopped   bool
	lingering map[net.Conn]struct{}
}

// limitListener wraps ln so that at most Config.Concurrency connections are
// open at once (see above).
func (a *App) limitListener(ln net.Listener) net.Listener {
	if _, ok := ln.(*limitListener); ok {
		return ln
	}
	return &limitListener{
		Listener:     ln,
		limit:        int64(a.cfg.Concurrency),
		maxRejecting: refusalBudget(),
		acceptLog:    acceptLog{logger: a.logger},
		closing:      make(chan struct{}),
		observer:     a.refusalObserver(),
		timeouts:     connTimeoutsOf(&a.cfg),
		lineLimit:    mirrorLimit(a.cfg.HeaderLimit),
	}
}

// Accept returns the next connection within the limit, answering and
// closing the ones beyond it. Temporary errors of the wrapped listener
// (EMFILE, ENFILE, ECONNABORTED, ...) are retried after a backoff of 5 ms
// doubling to 1 s and logged at most once a second; fasthttp would end
// Serve on them. Other errors are returned as they are. Cost per accepted
// connection: one atomic add, and the limitConn and its timeoutConn
// (deadline.go), one allocation each; the retry path costs nothing until
// accept fails.
func (l *limitListener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if !temporaryAcceptError(err) {
				return nil, err
			}
			delay = nextAcceptDelay(delay)
			l.acceptLog.report(err, delay)
			acceptBackoff(delay, l.closing)
			continue
		}
		delay = 0
		if l.open.Add(1) <= l.limit {
			if tc, ok := c.(tlsConnState); ok {
				return &limitTLSConn{&limitConn{Conn: newTimeoutConn(c, &l.timeouts, false), l: l, lines: lineMirror{limit: l.lineLimit}}, tc}, nil
			}
			return &limitConn{Conn: newTimeoutConn(c, &l.timeouts, true), l: l, lines: lineMirror{limit: l.lineLimit}}, nil
		}
		l.open.Add(-1)
		l.refuse(c)
	}
}

// refuse answers c with the 503 envelope and closes it, in the background
// so that Accept keeps going. It first reads the request head (at most
// refuseHeadWait, 8 KiB): a response that arrives before the request was
// sent is dropped by clients such as net/http ("unsolicited response"); a
// client that sent nothing by then is closed without a response, as a
// silent served connection is. After writing, it lingers (linger.go) at
// most refuseLinger: closing a socket with unread input makes the kernel
// reset the connection, and the client could then lose the response.
// Cost: one goroutine and one descriptor for at most refuseHeadWait +
// refuseLinger (1 s; a silent client: refuseHeadWait; a client that reads
// its 503 and closes: about one round trip), and at most maxRejecting of
// them at once (refusalBudget, an eighth of the descriptor budget); past
// that, refused connections are closed at once, without a response.
func (l *limitListener) refuse(c net.Conn) {
	if l.rejecting.Add(1) > l.maxRejecting {
		l.rejecting.Add(-1)
		c.Close()
		return
	}
	go func() {
		release := func() { l.rejecting.Add(-1) }
		// head records what is read, for OnResponse (observe.go).
		head, obs := l.recordHead(c)
		_ = c.SetDeadline(time.Now().Add(refuseHeadWait))
		if !readRequestHead(head) {
			obs.discard() // nothing answered, nothing observed
			c.Close()     // nothing asked, nothing answered (as for a silent served connection)
			release()
			return
		}
		deadline := time.Now().Add(refuseLinger)
		_ = c.SetDeadline(deadline)
		_, err := c.Write(overloadResponse)
		l.observeRefusal(c, obs) // OnResponse sees the 503
		if err != nil {
			c.Close()
			release()
			return
		}
		l.linger(c, deadline, refuseBytes, release)
	}()
}

// readRequestHead reads from c until the end of a request head
// ("\r\n\r\n"), 8 KiB, an error or c's deadline, whichever comes first.
// It reports whether c sent anything.
func readRequestHead(c net.Conn) (sent bool) {
	var buf [1024]byte
	var tail [3]byte // last bytes of the previous read, for a split "\r\n\r\n"
	nt := 0
	for n := 0; n < 8<<10; {
		m, err := c.Read(buf[:])
		if m > 0 {
			sent = true
			chunk := append(tail[:nt:nt], buf[:m]...)
			if bytes.Contains(chunk, headEnd) {
				return
			}
			nt = copy(tail[:], chunk[max(0, len(chunk)-3):])
			n += m
		}
		if err != nil {
			return
		}
	}
	return
}

var headEnd = []byte("\r\n\r\n")

// limitConn gives its slot back when it is closed: on the first Close, or,
// for a connection that ends with a transport error response, when its
// lingering close (linger.go) ends.
type limitConn struct {
	net.Conn
	l       *limitListener
	closed  atomic.Bool
	linger  atomic.Bool // set by errorResponse; Close may come from Shutdown's goroutine
	gotByte bool        // some request byte was read (fasthttp's connection goroutine only)
	lines   lineMirror  // what was read, for the request-line check (framing.go)
}

// Read notes that the client sent something. Cost: one branch per read.
func (c *limitConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.gotByte {
		c.gotByte = true
	}
	c.lines.feed(p[:n])
	return n, err
}

// errorResponse is called by transportError before fasthttp writes a
// transport error response and closes c. It reports whether to write it:
// a connection that never sent a byte (it reached ReadTimeout silent, or
// the client went away) is closed quietly, since a 408 nobody asked for
// only confuses clients and costs a write. Otherwise the response is
// written and c's Close lingers, because request bytes may still arrive.
func (c *limitConn) errorResponse() bool {
	if !c.gotByte {
		c.Close() // fasthttp's write then fails on the closed conn: nothing is sent
		return false
	}
	c.linger.Store(true)
	return true
}

func (c *limitConn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		if c.linger.Load() {
			return nil // the lingering goroutine owns the socket now
		}
		return c.Conn.Close()
	}
	if c.linger.Load() {
		_ = c.Conn.SetDeadline(time.Time{}) // the phase timeouts end; linger sets its own (deadline.go)
		go c.l.linger(c.Conn, time.Now().Add(lingerTimeout), lingerBytes, c.release)
		return nil
	}
	c.release()
	return c.Conn.Close()
}

func (c *limitConn) release() {
	c.l.open.Add(-1)
	if tc, ok := c.Conn.(*timeoutConn); ok {
		tc.done() // its phase clock (deadline.go)
	}
}

// limitConnOf is the limitConn behind a connection fasthttp serves, or nil
// for one that did not come through a limitListener.
func limitConnOf(c net.Conn) *limitConn {
	switch c := c.(type) {
	case *limitConn:
		return c
	case *limitTLSConn:
		return c.limitConn
	}
	return nil
}

// tlsConnState is what fasthttp looks for to report RequestCtx.IsTLS and
// TLSConnectionState; limitTLSConn keeps it visible through the wrapper.
type tlsConnState interface {
	Handshake() error
	ConnectionState() tls.ConnectionState
}

type limitTLSConn struct {
	*limitConn
	tls tlsConnState // the *tls.Conn under limitConn's timeoutConn
}

func (c *limitTLSConn) Handshake() error { return c.tls.Handshake() }

func (c *limitTLSConn) ConnectionState() tls.ConnectionState { return c.tls.ConnectionState() }
