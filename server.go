package fx

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Listen boots the App and serves HTTP on addr (":8080", "127.0.0.1:0")
// until Shutdown, and returns only after that shutdown has completed (see
// Serve for what it returns). It refuses to start, returning the boot
// error, when Boot fails, and returns net.Listen's error when addr cannot
// be listened on. To serve until SIGINT/SIGTERM and drain within a grace
// period, use Run.
func (a *App) Listen(addr string) error {
	if err := a.Boot(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return a.Serve(ln)
}

// Serve boots the App and serves HTTP on ln until Shutdown. It returns
// only after the shutdown has completed: the requests in flight answered
// (or ShutdownWithContext's bound reached) and the OnShutdown functions
// run, so a main that returns or exits when Serve returns cuts nothing off
// (SPEC rule 21). fasthttp's own Serve returns as soon as Shutdown begins;
// Serve waits for the rest.
//
// It returns what Shutdown (or ShutdownWithContext) returned: nil after a
// clean shutdown; the shutdown's error when it was not clean (ctx ended
// with requests still in flight, an OnShutdown function failed), so that
// `log.Fatal(app.Listen(addr))` reports an unclean shutdown. Serve called
// after a shutdown has begun serves nothing: it closes ln, waits for that
// shutdown and returns its result.
//
// When serving fails on its own (ln's Accept returns a permanent error,
// or ln is closed by someone else), Serve returns that error (nil for a
// closed ln) at once, without waiting for a Shutdown nobody may call: the
// App is not shut down (it may be serving other listeners; call Shutdown,
// or use Run, which shuts down in that case). Like Listen, Serve refuses
// to start when Boot fails. ln is closed when Serve returns.
func (a *App) Serve(ln net.Listener) error {
	if err := a.Boot(); err != nil {
		ln.Close()
		return err
	}
	srv := a.Server()
	sl := &serveListener{Listener: a.limitListener(ln)}
	if !a.life.add(sl) {
		sl.Close()
		return a.life.wait()
	}
	err := srv.Serve(sl)
	sl.Close() // fasthttp leaves a listener that failed open
	if a.life.remove(sl) {
		return a.life.wait() // the listener was closed by the shutdown
	}
	return err
}

// Server returns the fasthttp.Server the App serves with (created on first
// use from Config: limits, timeouts, the transport error handler). Adjust
// fields before the first Serve if Config lacks a knob you need. Server
// boots the App (its Handler is the booted handler): register routes,
// middleware and plugins first.
func (a *App) Server() *fasthttp.Server {
	a.srvMu.Lock()
	defer a.srvMu.Unlock()
	if a.server == nil {
		a.server = a.newServer()
	}
	return a.server
}

func (a *App) newServer() *fasthttp.Server {
	cfg := a.cfg
	srv := &fasthttp.Server{
		Handler:               a.Handler(),
		ErrorHandler:          a.transportError,
		Name:                  cfg.ServerHeader,
		NoDefaultServerHeader: cfg.ServerHeader == "",
		MaxRequestBodySize:    cfg.BodyLimit,
		ReadBufferSize:        cfg.HeaderLimit,
		ReadTimeout:           cfg.ReadTimeout,
		WriteTimeout:          cfg.WriteTimeout,
		IdleTimeout:           cfg.IdleTimeout,
		Concurrency:           fasthttpConcurrency(cfg.Concurrency),
		Logger:                fasthttpLogger{a},
		CloseOnShutdown:       true,
	}
	srv.HeaderReceived = framingGuard(srv) // refuses ambiguous framing: framing.go
	return srv
}

// Shutdown stops accepting connections, waits for in-flight requests to
// finish (without a deadline; see ShutdownWithContext), then runs the
// OnShutdown functions. From Shutdown on, Ctx.Context of running handlers
// is done, responses carry Connection: close, and new connections are
// refused by the closed listener. Idle keep-alive connections are closed
// at once; a connection that never sent a request counts as idle 5s after
// it was accepted (as in net/http), unless ReadTimeout ends it first.
// Listen and Serve return when Shutdown does, with its result.
//
// An App shuts down once: a second call (concurrent or later) does not
// run the OnShutdown functions again; it waits for the first shutdown to
// finish and returns the first's result. Do not call Shutdown from a
// handler without a goroutine (it waits for that handler), and do not
// wait for Serve to return inside an OnShutdown function (Serve waits for
// it).
func (a *App) Shutdown() error {
	return a.ShutdownWithContext(context.Background())
}

// ShutdownWithContext is Shutdown bounded by ctx: when ctx ends first, it
// stops waiting, runs the OnShutdown functions and returns ctx's error
// (context.Cause(ctx), joined with theirs). A connection whose request is
// still running is not cut off: its response is sent with Connection:
// close, and the connection is then closed (unless the process exits
// first, which is what the bound is for). A second call waits, within its
// own ctx, for the first shutdown to finish and returns the first's
// result.
func (a *App) ShutdownWithContext(ctx context.Context) error {
	first, lns, done := a.life.begin()
	if !first {
		select {
		case <-done:
			return a.life.result()
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	a.stopping.Store(true) // every response from now on closes its connection
	a.baseCancel()         // in-flight handlers see c.Context() done
	for _, ln := range lns {
		ln.Close() // also those fasthttp has not registered yet (see serveListener)
	}
	a.srvMu.Lock()
	srv, ln := a.server, a.testLn
	a.testLn = nil
	a.srvMu.Unlock()
	var errs []error
	if srv != nil {
		if err := srv.ShutdownWithContext(ctx); err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				err = context.Cause(ctx) // e.g. Run's "grace period exceeded"
			}
			errs = append(errs, err)
		}
	}
	if ln != nil {
		ln.Close()
	}
	a.regMu.Lock()
	closers := a.closers
	a.closers = nil
	a.regMu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		if err := closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	err := errors.Join(errs...)
	a.life.finish(err)
	return err
}

// transportError answers what fasthttp could not hand to a handler (a
// malformed request, a body or headers over the limit, a read timeout) with
// the envelope. The raw request bytes are never echoed.
func (a *App) transportError(rc *fasthttp.RequestCtx, err error) {
	if lc := limitConnOf(rc.Conn()); lc != nil && !lc.errorResponse() {
		return
	}
	code := ErrorCodes.BadRequest
	msg := "The request could not be parsed"
	var small *fasthttp.ErrSmallBuffer
	var timeout interface{ Timeout() bool } // net.Error, and in-memory conns that only have Timeout
	switch r := refusedFraming(rc); {
	case r != nil: // refused by framingGuard (framing.go)
		code, msg = r.code, r.msg
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		code, msg = ErrorCodes.PayloadTooLarge, "The request body is larger than the server accepts"
	case errors.As(err, &small):
		code, msg = ErrorCodes.HeadersTooLarge, "The request headers are larger than the server accepts"
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &timeout) && timeout.Timeout():
		code, msg = ErrorCodes.RequestTimeout, "The request was not received in time"
	}
	rc.Response.Reset()
	a.writeEnvelope(&rc.Response, ErrorStatus[code], code, msg, nil)
}

// fasthttpLogger sends fasthttp's own messages to the App's logger at debug
// level (they are connection-level noise such as client resets).
type fasthttpLogger struct{ a *App }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.a.logger.Debug("fasthttp", "msg", fmt.Sprintf(format, args...))
}

// acquireCtx takes a Ctx from the pool for rc and rt.
func (a *App) acquireCtx(rc *fasthttp.RequestCtx, rt *route) *Ctx {
	c := a.ctxPool.Get().(*Ctx)
	c.rc, c.rt = rc, rt
	return c
}

// releaseCtx returns c to the pool; c must not be used afterwards.
func (a *App) releaseCtx(c *Ctx) {
	c.reset()
	a.ctxPool.Put(c)
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
	body := AppendEnvelope(nil, &Error{Code: ErrorCodes.ServiceUnavailable, Message: overloadMessage})
	b := []byte("HTTP/1.1 503 Service Unavailable\r\n" +
		"Content-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n" +
		"Retry-After: 1\r\n" +
		"Connection: close\r\n\r\n")
	return append(b, body...)
}()

// limitListener counts the connections it hands out and refuses those
// beyond limit with the 503 envelope. It also retries temporary accept
// errors (connlimit.go) and tracks lingering connections (linger.go).
type limitListener struct {
	net.Listener
	limit        int64
	open         atomic.Int64
	rejecting    atomic.Int64
	maxRejecting int64 // refusalBudget at Serve
	acceptLog    acceptLog
	closing      chan struct{} // closed by Close: ends backoffs and lingering

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
	}
}

// Accept returns the next connection within the limit, answering and
// closing the ones beyond it. Temporary errors of the wrapped listener
// (EMFILE, ENFILE, ECONNABORTED, ...) are retried after a backoff of 5 ms
// doubling to 1 s and logged at most once a second; fasthttp would end
// Serve on them. Other errors are returned as they are. Cost per accepted
// connection: one atomic add and the limitConn (one allocation, as
// before); the retry path costs nothing until accept fails.
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
			if _, ok := c.(tlsConnState); ok {
				return &limitTLSConn{&limitConn{Conn: c, l: l}}, nil
			}
			return &limitConn{Conn: newDeadlineConn(c), l: l}, nil // deadline.go
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
		c.SetDeadline(time.Now().Add(refuseHeadWait)) //nolint:errcheck
		if !readRequestHead(c) {
			c.Close() // nothing asked, nothing answered (as for a silent served connection)
			release()
			return
		}
		deadline := time.Now().Add(refuseLinger)
		c.SetDeadline(deadline) //nolint:errcheck
		if _, err := c.Write(overloadResponse); err != nil {
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
}

// Read notes that the client sent something. Cost: one branch per read.
func (c *limitConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.gotByte {
		c.gotByte = true
	}
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
		go c.l.linger(c.Conn, time.Now().Add(lingerTimeout), lingerBytes, c.release)
		return nil
	}
	c.release()
	return c.Conn.Close()
}

func (c *limitConn) release() { c.l.open.Add(-1) }

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

type limitTLSConn struct{ *limitConn }

func (c *limitTLSConn) Handshake() error { return c.Conn.(tlsConnState).Handshake() }

func (c *limitTLSConn) ConnectionState() tls.ConnectionState {
	return c.Conn.(tlsConnState).ConnectionState()
}
