package conn

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fxhq/fx/internal/ilist"
)

// Config is what NewListener needs from the App: its limits and
// timeouts, and the two functions of the core a refused connection calls.
type Config struct {
	// Limit is the most connections open at once (fx's
	// Config.Concurrency); the one beyond it is refused.
	Limit int
	// Timeouts are the phase bounds of every connection (deadline.go).
	Timeouts Timeouts
	// Refuse writes the complete response to a connection refused for
	// over-concurrency (fx: the prebuilt 503 FX_SERVICE_UNAVAILABLE
	// envelope) and returns the write's error. It runs on the refusal's
	// goroutine, after the request head was read, under a write deadline.
	// Nil: refused connections are closed without a response.
	Refuse func(c net.Conn) error
	// Observe, when set, sees every refusal Refuse answered: c is the
	// refused connection, head the request head the client sent (at most
	// MaxRefusalHead bytes, valid only during the call), start when
	// reading it began. Nil costs nothing: the head is not recorded.
	Observe func(c net.Conn, head []byte, start time.Time)
	// Logger receives the accept-failure reports (at most one a second);
	// nil: none.
	Logger *slog.Logger
}

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
	n := NofileLimit()
	if n == 0 || n > 1<<30 {
		return 0
	}
	return max(int(n)-fdReserve, 0)
}

// DefaultLimit is the connection limit to use when none is configured
// (fx's Config.Concurrency default) under the current descriptor limit
// (see above): three quarters of the descriptor budget, at least 8, at
// most ceiling (fx.DefaultConcurrency); ceiling when the platform has no
// such limit. Cost: one getrlimit system call (fx calls it once, at New).
func DefaultLimit(ceiling int) int {
	b := descriptorBudget()
	if b == 0 {
		return ceiling
	}
	return min(max(b*3/4, 8), ceiling)
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
// limitListener (NewListener) that counts open connections (one atomic add
// per accepted connection, one per close; nothing per request). A
// connection accepted beyond the limit is answered by Config.Refuse, which
// fx gives the prebuilt
//
//	HTTP/1.1 503 Service Unavailable
//	{"error":{"code":"FX_SERVICE_UNAVAILABLE","message":"..."}}
//
// with Connection: close, and closed. fasthttp's limit is set above ours
// (FasthttpConcurrency) so that it never fires first: fasthttp releases a
// worker only after the connection's Close, so for an instant a closed
// connection still holds a fasthttp worker.

// FasthttpConcurrency is the backstop to give fasthttp.Server.Concurrency
// for a Listener whose Limit is n: n plus a quarter, at least 64 more.
func FasthttpConcurrency(n int) int {
	return n + max(n/4, 64)
}

// limitListener counts the connections it hands out and refuses those
// beyond limit (refuse). It also retries temporary accept errors (Accept,
// with acceptBackoff above) and tracks lingering connections (linger.go).
type limitListener struct {
	net.Listener
	limit        int64
	open         atomic.Int64
	rejecting    atomic.Int64
	maxRejecting int64 // refusalBudget at NewListener
	acceptLog    acceptLog
	closing      chan struct{}                     // closed by Close: ends backoffs and lingering
	timeouts     connTimeouts                      // the phase bounds of its connections (deadline.go)
	answer       func(net.Conn) error              // Config.Refuse
	observe      func(net.Conn, []byte, time.Time) // Config.Observe; nil: heads are not recorded

	lingerMu  sync.Mutex
	stopped   bool
	lingering map[net.Conn]struct{}

	draining atomic.Bool // set by Close: connections close the draining way (drain.go)
	drains   drainCount  // draining closes in progress

	readsBy atomic.Int64 // the shutdown's bound on reads (EndReadsBy, drain.go); 0: none
	connsMu sync.Mutex
	conns   ilist.List[*limitConn] // the open connections (limitConn.node)
}

// NewListener wraps ln so that at most cfg.Limit connections are open at
// once (see above), each timed phase by phase (deadline.go), and closed
// lingering after an error response (linger.go). Temporary accept errors are retried, never
// returned. A Listener given to NewListener again is returned as it is.
// Cost per accepted connection: see Accept.
func NewListener(ln net.Listener, cfg Config) net.Listener {
	if _, ok := ln.(*limitListener); ok {
		return ln
	}
	l := &limitListener{
		Listener:     ln,
		limit:        int64(cfg.Limit),
		maxRejecting: refusalBudget(),
		acceptLog:    acceptLog{logger: cfg.Logger},
		closing:      make(chan struct{}),
		answer:       cfg.Refuse,
		observe:      cfg.Observe,
		timeouts:     cfg.Timeouts.limits(),
	}
	l.timeouts.readsBy = &l.readsBy
	return l
}

// Accept returns the next connection within the limit, answering and
// closing the ones beyond it. Temporary errors of the wrapped listener
// (EMFILE, ENFILE, ECONNABORTED, ...) are retried after a backoff of 5 ms
// doubling to 1 s and logged at most once a second; fasthttp would end
// Serve on them. Other errors are returned as they are. Cost per accepted
// connection: one atomic add, the limitConn and its timeoutConn
// (deadline.go), one allocation each, and an uncontended lock to list it
// among the open connections (and one when it is released); the retry
// path costs nothing until accept fails.
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
				lc := &limitConn{Conn: newTimeoutConn(c, &l.timeouts, false), l: l}
				l.list(lc)
				return &limitTLSConn{lc, tc}, nil
			}
			lc := &limitConn{Conn: newTimeoutConn(c, &l.timeouts, true), l: l}
			l.list(lc)
			return lc, nil
		}
		l.open.Add(-1)
		l.refuse(c)
	}
}

// refuse answers c with Config.Refuse's response (fx: the 503 envelope)
// and closes it, in the background so that Accept keeps going. It first
// reads the request head (at most refuseHeadWait, 8 KiB): a response that
// arrives before the request was sent is dropped by clients such as
// net/http ("unsolicited response"); a client that sent nothing by then
// is closed without a response, as a silent served connection is. After
// writing, it lingers (linger.go) at most refuseLinger: closing a socket
// with unread input makes the kernel reset the connection, and the client
// could then lose the response. Cost: one goroutine and one descriptor for
// at most refuseHeadWait + refuseLinger (1 s; a silent client:
// refuseHeadWait; a client that reads its 503 and closes: about one round
// trip), and at most maxRejecting of them at once (refusalBudget, an
// eighth of the descriptor budget); past that, or without Config.Refuse,
// refused connections are closed at once, without a response.
func (l *limitListener) refuse(c net.Conn) {
	if l.answer == nil {
		c.Close()
		return
	}
	if l.rejecting.Add(1) > l.maxRejecting {
		l.rejecting.Add(-1)
		c.Close()
		return
	}
	go func() {
		release := func() { l.rejecting.Add(-1) }
		var from net.Conn = c
		head := l.recordHead(c) // what is read, for Config.Observe
		if head != nil {
			from = head
		}
		_ = c.SetDeadline(time.Now().Add(refuseHeadWait))
		if !readRequestHead(from) {
			head.discard() // nothing answered, nothing observed
			c.Close()      // nothing asked, nothing answered (as for a silent served connection)
			release()
			return
		}
		deadline := time.Now().Add(refuseLinger)
		_ = c.SetDeadline(deadline)
		err := l.answer(c)
		if head != nil {
			l.observe(c, head.head, head.start) // fx: OnResponse sees the 503
			head.discard()
		}
		if err != nil {
			c.Close()
			release()
			return
		}
		l.linger(c, deadline, refuseBytes, release)
	}()
}

// MaxRefusalHead bounds the head Config.Observe is given:
// readRequestHead's 8 KiB and one read past it.
const MaxRefusalHead = 9 << 10

// headRecorder is the connection refuse reads the request head from when
// the Listener has an observer: it keeps a copy of what it reads, at most
// MaxRefusalHead bytes. Pooled: recorders are taken only for refusals in
// flight, which refusalBudget bounds.
type headRecorder struct {
	net.Conn
	head  []byte
	start time.Time
}

var headRecorders = sync.Pool{New: func() any { return new(headRecorder) }}

// recordHead returns the connection refuse should read the head from: a
// headRecorder over c, or nil (c read as it is) without an observer.
func (l *limitListener) recordHead(c net.Conn) *headRecorder {
	if l.observe == nil {
		return nil
	}
	r := headRecorders.Get().(*headRecorder)
	r.Conn, r.head, r.start = c, r.head[:0], time.Now()
	return r
}

func (r *headRecorder) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	if room := MaxRefusalHead - len(r.head); n > 0 && room > 0 {
		r.head = append(r.head, p[:min(n, room)]...)
	}
	return n, err
}

// discard gives r back to the pool; r nil: nothing to do.
func (r *headRecorder) discard() {
	if r == nil {
		return
	}
	r.Conn = nil
	if cap(r.head) > MaxRefusalHead {
		r.head = nil
	}
	headRecorders.Put(r)
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
	linger  atomic.Bool            // set by errorResponse; Close may come from Shutdown's goroutine
	gotByte bool                   // some request byte was read (fasthttp's connection goroutine only)
	node    ilist.Node[*limitConn] // its place in l.conns, under l.connsMu
	bareLF  bool                   // the last read was a head ended by a bare LF (bareblock.go); same goroutine
}

// Read notes that the client sent something, and fails at once with
// ErrBareLFHead after a read that returned a head fasthttp would wait on
// (bareblock.go). Until the first byte arrives it grows the serving
// goroutine's stack (stack.go). Cost: two branches per read, and a few
// byte compares on a read that begins a request; once per connection,
// reserveStack.
func (c *limitConn) Read(p []byte) (int, error) {
	if c.bareLF {
		return 0, ErrBareLFHead
	}
	start := true
	if !c.gotByte {
		reserveStack()
	} else {
		start = c.idle()
	}
	n, err := c.Conn.Read(p)
	if n > 0 && c.closed.Load() {
		return 0, io.EOF // closed while the listener drains: what raced the close is not served (drain.go)
	}
	if n > 0 {
		c.gotByte = true
		if start && bareLFHead(p[:n]) {
			c.bareLF = true
		}
	}
	return n, err
}

// idle reports whether c waits for a request: its response went out, so
// the next bytes begin a request (deadline.go's phases; false when c has
// none).
func (c *limitConn) idle() bool {
	tc, ok := c.Conn.(*timeoutConn)
	return ok && tc.phase != phaseReading && !tc.handedOver.Load()
}

// errorResponse is called (ErrorResponse) before fasthttp writes a
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

// UnsafeConn returns the connection under c's limit and phase timeouts
// (the accepted socket, or the *tls.Conn over it), as fasthttp's
// hijacked connection does for its own wrapper: once the connection is
// handed over (a hijack), a write to it sends what c's write would, and
// its type tells what it can do (package websocket tries a write without
// blocking on a socket). Its Close bypasses c's accounting: close c.
func (c *limitConn) UnsafeConn() net.Conn {
	if tc, ok := c.Conn.(*timeoutConn); ok {
		return tc.Conn
	}
	return c.Conn
}

func (c *limitConn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		if c.linger.Load() || c.l.draining.Load() {
			return nil // the lingering or draining goroutine owns the socket now
		}
		return c.Conn.Close()
	}
	if c.linger.Load() {
		_ = c.Conn.SetDeadline(time.Time{}) // the phase timeouts end; linger sets its own (deadline.go)
		go c.l.linger(c.Conn, time.Now().Add(lingerTimeout), lingerBytes, c.release)
		return nil
	}
	if c.l.draining.Load() {
		c.l.drainClose(c) // the listener is closed: a clean end for the client (drain.go)
		return nil
	}
	c.release()
	return c.Conn.Close()
}

// list adds c to the listener's open connections (EndReadsBy walks them).
func (l *limitListener) list(c *limitConn) {
	l.connsMu.Lock()
	c.node.Value = c
	l.conns.Push(&c.node)
	l.connsMu.Unlock()
}

// unlist removes c from the open connections, once.
func (l *limitListener) unlist(c *limitConn) {
	l.connsMu.Lock()
	l.conns.Remove(&c.node)
	l.connsMu.Unlock()
}

func (c *limitConn) release() {
	c.l.unlist(c)
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

// ErrorResponse is the hook of a server's transport-error path (fx:
// transportError), called before an error response is written to c, a
// connection fasthttp serves, which is then closed. It reports whether to
// write the response: a connection of a Listener that never sent a byte
// (it reached its read timeout silent, or the client went away) is closed
// quietly and ErrorResponse reports false, since a 408 nobody asked for
// only confuses clients and costs a write. Otherwise it reports true, and
// for a connection of a Listener the close after the response lingers
// (linger.go), because request bytes may still arrive. Cost: a type switch.
func ErrorResponse(c net.Conn) bool {
	if lc := limitConnOf(c); lc != nil {
		return lc.errorResponse()
	}
	return true
}

// Managed is the connection under c whose deadlines the Listener manages
// (phase by phase, deadline.go), for a handler that sets its own (fx's
// Ctx.Stream renews its write deadline per flush); nil when c did not
// come through a Listener (an in-memory RequestCtx, a fasthttp.Server
// served without NewListener), whose deadlines are not the caller's to
// set.
func Managed(c net.Conn) net.Conn {
	if lc := limitConnOf(c); lc != nil {
		return lc.Conn
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
