package fx

import (
	"net"
	"sync"
	"time"

	"github.com/fxhq/fx/internal/handover"
	"github.com/valyala/fasthttp"
)

// A detached request: a handler that takes the connection over after its
// response (a WebSocket upgrade, package websocket) keeps its Ctx, and the
// request's observation, until the connection is over. The handler calls
// Ctx.Detach and Ctx.Hijack; finish (request.go) then neither observes
// nor releases the Ctx when the chain returns, provided the response that
// leaves is the 101 Switching Protocols the hijack needs. fasthttp writes
// it and calls the hijack function fx registered (handOver) on a
// goroutine of its own, which takes the connection from under fasthttp's
// read buffer (takeConn), moves the Ctx onto a copy of its RequestCtx
// (ownRequest), starts the handler's function on a new goroutine and
// returns, so that fasthttp drops its buffer and recycles its RequestCtx
// at once rather than at the connection's end. The handler's function
// calls end when the connection is over, with what it ended with: a
// failure goes through the error boundary (failedAfterResponse, in
// boundary.go), which codes it and logs a 5xx as it does for any
// request, and the OnResponse observers run then, once, with the whole
// connection's Duration and what was added to the log attributes
// meanwhile.

// Detach keeps c valid past the return of the handler chain, for a
// handler that serves the connection itself after its response: it
// calls Detach, sets the 101 Switching Protocols response, and hands the
// connection to fn with c.Hijack(fn). Detach returns end, which fn must
// call exactly once when the connection is over, before fn returns (the
// connection is closed after that), with what the connection ended with:
// nil when it ended well; else the failure, which the error boundary
// judges as it judges a handler's returned error (a *PanicError for a
// panic fn recovered): c.ErrorCode() is then its code (an *Error's Code;
// FX_INTERNAL_ERROR for anything else), and a failure of status 500 or
// more is logged as any request's 5xx is, with the same keys and the
// log attributes added until end. Nothing is written to the connection
// and the error hook does not run: the response has left. Until end, c
// and every accessor (Value, Param, Header, LogAttrs, Context) keep the
// request's values: a principal or tenant a middleware stored is still
// readable; c.Context() ends at end, or when the App shuts down.
//
// The OnResponse observers run at end, not when the chain returns:
// c.Status() is 101, c.Duration() spans the handshake and the whole
// connection, c.LogAttrs() holds what was added until end. When the
// response that leaves is not a 101 (a middleware turned it into an
// error after the handler returned), or Shutdown has begun (the request
// is then answered 503 FX_SERVICE_UNAVAILABLE), the hijack is cancelled
// and the request ends as any other, observed and released at once; fn
// never runs and end is a no-op.
//
// Cost: one closure and one sync.Once per detached request; the Ctx stays
// out of the pool for the connection's life. c must not be used from two
// goroutines at once: only fn (and what fn waits for) uses it.
func (c *Ctx) Detach() (end func(err error)) {
	c.out.detached = true
	var once sync.Once
	return func(err error) {
		once.Do(func() { c.app.endDetached(c, err) })
	}
}

// Hijack hands the connection to fn once the response is written (see
// fasthttp.RequestCtx.Hijack): fn runs on a goroutine of its own, the
// connection is closed when fn returns, and fx's connection timeouts no
// longer apply to it. Use it with Detach, called first; without Detach, c
// must not be used in fn (it is recycled when the chain returns). Under
// the nethttp adapter the same happens on the connection net/http hands
// over (http.Hijacker): the adapter writes the 101's head as fasthttp
// would and calls fn's hand-over, so a handler that takes the connection
// over is one code path on both transports.
//
// fn reads the connection itself, not through the server's read buffer
// (Config.HeaderLimit bytes): bytes the client sent after the request,
// which that buffer already holds, are read first, and the buffer goes
// back to the server at once instead of staying with the connection for
// its whole life. A detached c moves onto a copy of its request (head,
// parameters and values) at the same moment, so that it stays valid while
// fasthttp reuses its own request context.
//
// The App's fasthttp server keeps hijacked connections open
// (fasthttp.Server.KeepHijackedConns): a handler that calls
// c.RequestCtx().Hijack directly, rather than Hijack, closes the
// connection itself.
//
// Cost, once per connection: a goroutine start, a closure, one read with
// a passed deadline (two deadline sets), and for a detached c one
// RequestCtx the size of the request's head.
func (c *Ctx) Hijack(fn func(conn net.Conn)) {
	if fn == nil {
		c.rc.Hijack(nil)
		return
	}
	held := c
	if !c.out.detached {
		held = nil // recycled when the chain returns: not ours to touch in fn
	}
	hf := fasthttp.HijackHandler(func(hc net.Conn) { handOver(held, hc, fn) })
	c.rc.Hijack(hf)
	c.rc.SetUserValue(handover.Key{}, hf) // for a transport adapter (nethttp), which fasthttp's server does not serve
}

// handOver runs on fasthttp's hijack goroutine: it takes the connection
// from under fasthttp's hijacked one (takeConn), moves a held Ctx onto a
// request of its own, and runs fn on a new goroutine, so that this one
// returns and fasthttp drops its read buffer and recycles its
// RequestCtx. The server keeps the connection open (KeepHijackedConns):
// it is closed here, when fn returns.
func handOver(c *Ctx, hc net.Conn, fn func(net.Conn)) {
	nc := takeConn(hc)
	if c != nil {
		c.ownRequest(nc)
	}
	go func() {
		defer nc.Close()
		fn(nc)
	}()
}

// passedDeadline is a read deadline already past: a read returns what is
// buffered, or times out without reading the socket.
var passedDeadline = time.Unix(1, 0)

// takeConn returns the connection under hc, fasthttp's hijacked
// connection (which reads through the server's read buffer), preceded by
// what that buffer holds. It reads hc with a passed deadline until the
// read fails: the buffer's bytes come first, then the deadline (or the
// end of the input) stops the read without losing a byte. A connection
// that is not fasthttp's, or that refuses the deadline, is returned as it
// is.
func takeConn(hc net.Conn) net.Conn {
	u, ok := hc.(interface{ UnsafeConn() net.Conn })
	if !ok {
		return hc
	}
	raw := u.UnsafeConn()
	if hc.SetReadDeadline(passedDeadline) != nil {
		return hc
	}
	var pending []byte
	var buf [512]byte
	for {
		n, err := hc.Read(buf[:])
		pending = append(pending, buf[:n]...)
		if err != nil || n == 0 {
			break
		}
	}
	_ = raw.SetReadDeadline(time.Time{})
	if len(pending) == 0 {
		return raw
	}
	return &pendingConn{Conn: raw, pending: pending}
}

// pendingConn is a taken connection whose first bytes were already read
// (takeConn).
type pendingConn struct {
	net.Conn
	pending []byte
}

func (c *pendingConn) Read(p []byte) (int, error) {
	if len(c.pending) == 0 {
		return c.Conn.Read(p)
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	if len(c.pending) == 0 {
		c.pending = nil
	}
	return n, nil
}

// UnsafeConn returns the connection whose first bytes c replays, as
// fasthttp's hijacked connection does.
func (c *pendingConn) UnsafeConn() net.Conn { return c.Conn }

// ownRequest moves c, held past its 101, from fasthttp's RequestCtx
// (recycled when the hijack goroutine returns) onto a copy on nc: the
// request and response heads, the user values (route parameters, values
// of fx and of middleware), the client address and the start of the
// clock. The copy's user values are closed when c ends (endDetached), as
// fasthttp would have closed the original's.
func (c *Ctx) ownRequest(nc net.Conn) {
	rc := c.rc
	if c.app.observers != nil && c.out.start.IsZero() {
		c.out.start = rc.Time() // read since startClock: the request's start
	}
	if p, ok := nc.(*pendingConn); ok {
		nc = p.Conn // what the RequestCtx asks of its connection (IsTLS ...) is the connection's
	}
	own := new(fasthttp.RequestCtx)
	own.Init2(nc, fasthttpLogger{c.app}, false)
	rc.Request.CopyTo(&own.Request)
	rc.Response.CopyTo(&own.Response)
	own.SetRemoteAddr(rc.RemoteAddr())
	rc.VisitUserValuesAll(func(k, v any) {
		own.SetUserValue(k, v)
		rc.SetUserValue(k, nil) // its closers are own's now: fasthttp's reset must not close them
	})
	if c.jw.resp != nil {
		c.jw.resp = &own.Response
	}
	c.rc = own
}

// holdDetached decides, in finish, whether c, detached, is held past the
// chain: only for a 101 that fasthttp will hijack, and not once Shutdown
// has begun (finish would close the connection, which cancels the
// hijack). Otherwise it cancels the hijack (and answers 503 when
// stopping), and the request ends as usual.
func (a *App) holdDetached(rc *fasthttp.RequestCtx, c *Ctx) bool {
	if rc.Response.StatusCode() == fasthttp.StatusSwitchingProtocols && rc.Hijacked() {
		if !a.life.stop.begun() {
			// Observed at end: a second finish of this request (dispatch
			// after a router redirect check) must not observe the 101.
			rc.SetUserValue(observedKey{}, true)
			return true
		}
		rc.Response.Header.Del("Upgrade")
		rc.Response.Header.Del("Sec-WebSocket-Accept")
		status, _ := statusOf(codeServiceUnavailable)
		a.writeEnvelope(&rc.Response, status, codeServiceUnavailable, shuttingDownMessage, nil)
		c.out.code = codeServiceUnavailable
	}
	rc.Hijack(nil)
	c.out.detached = false
	return false
}

// shuttingDownMessage is the message of the 503 a detached request gets
// when Shutdown began before its connection could be handed over.
const shuttingDownMessage = "The server is shutting down"

// endDetached ends a held request: a failure (err) goes through the
// boundary, the observers see the request and c goes back to the pool. A
// Ctx whose hold was cancelled was already released: end then does
// nothing.
func (a *App) endDetached(c *Ctx, err error) {
	if !c.out.detached {
		return
	}
	if err != nil {
		a.failedAfterResponse(c, err)
	}
	if a.observers != nil {
		if c.out.start.IsZero() {
			c.out.start = c.rc.Time()
		}
		a.observe(c)
	}
	c.rc.ResetUserValues() // closes what a middleware stored that needs closing
	c.release()
}
