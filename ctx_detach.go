package fx

import (
	"net"
	"sync"

	"github.com/valyala/fasthttp"
)

// A detached request: a handler that takes the connection over after its
// response (a WebSocket upgrade, package websocket) keeps its Ctx, and the
// request's observation, until the connection is over. The handler calls
// Ctx.Detach and Ctx.Hijack; finish (request.go) then neither observes
// nor releases the Ctx when the chain returns, provided the response that
// leaves is the 101 Switching Protocols the hijack needs. fasthttp writes
// it, starts the hijack function on a goroutine of its own and keeps the
// RequestCtx (request, response head, remote address) until that function
// returns; the function calls end when the connection is over, and the
// OnResponse observers run then, once, with the whole connection's
// Duration and what was added to the log attributes meanwhile.

// Detach keeps c valid past the return of the handler chain, for a
// handler that serves the connection itself after its response: it
// calls Detach, sets the 101 Switching Protocols response, and hands the
// connection to fn with c.Hijack(fn). Detach returns end, which fn must
// call exactly once when the connection is over, before fn returns
// (fasthttp recycles the request after that); code is the ErrorCode the
// observers then see ("" for a connection that ended well). Until end, c
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
func (c *Ctx) Detach() (end func(code string)) {
	c.out.detached = true
	var once sync.Once
	return func(code string) {
		once.Do(func() { c.app.endDetached(c, code) })
	}
}

// Hijack hands the connection to fn once the response is written (see
// fasthttp.RequestCtx.Hijack): fn runs on a goroutine of its own, the
// connection is closed when fn returns, and fx's connection timeouts no
// longer apply to it. Use it with Detach; without Detach, c must not be
// used in fn (it is recycled when the chain returns). Under a transport
// that has no connection to hand over (the nethttp adapter), fn never
// runs.
func (c *Ctx) Hijack(fn func(conn net.Conn)) {
	c.rc.Hijack(fn)
}

// holdDetached decides, in finish, whether c, detached, is held past the
// chain: only for a 101 that fasthttp will hijack, and not once Shutdown
// has begun (finish would close the connection, which cancels the
// hijack). Otherwise it cancels the hijack (and answers 503 when
// stopping), and the request ends as usual.
func (a *App) holdDetached(rc *fasthttp.RequestCtx, c *Ctx) bool {
	if rc.Response.StatusCode() == fasthttp.StatusSwitchingProtocols && rc.Hijacked() {
		if !a.stopping.Load() {
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

// endDetached ends a held request: the observers see it (with code as its
// ErrorCode) and c goes back to the pool. A Ctx whose hold was cancelled
// was already released: end then does nothing.
func (a *App) endDetached(c *Ctx, code string) {
	if !c.out.detached {
		return
	}
	if a.observers != nil {
		if code != "" {
			c.out.code = code
		}
		c.out.start = c.rc.Time()
		a.observe(c)
	}
	c.release()
}
