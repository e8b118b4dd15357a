package fx

import "github.com/valyala/fasthttp"

// The end of every request: whichever way a request fx answers through a
// RequestCtx ended, it leaves through finish, here and nowhere else (a new
// exit, a new refusal or fast path, calls it: TestEveryEndFinishes lists
// the exits).

// An ending says how a request ended, for finish: whether the request
// has a Ctx, and what the OnResponse observers of one without see.
type ending uint8

const (
	// served: through serve or ServeError; c is the request's Ctx.
	served ending = iota
	// unserved: written without a Ctx (the 404 of notFound, a router
	// redirect, a failed boot's 500); observers get a Ctx of their own,
	// Route "", code its ErrorCode.
	unserved
	// refusedPath: as unserved, and c.Path() is the path as sent
	// (refusePath).
	refusedPath
	// transport: as unserved, with Duration 0 (fasthttp does not record
	// when it began reading a request it could not parse): a transport
	// error, a framing refusal (server.go).
	transport
)

// finish is the one last step of every request fx answers through a
// RequestCtx, whichever way it ended (serve, notFound, refusePath,
// dispatch for a redirect, ServeError, a failed boot, a transport error):
//
//  1. the OnResponse observers see the final response (observe.go), once
//     per request (observedKey); c is the request's Ctx, or nil for a
//     response written without one: the observers then get a Ctx of their
//     own, how says what it shows and code is its ErrorCode;
//  2. the Ctx goes back to the pool (Ctx.release);
//  3. once Shutdown has begun, the connection is closed after this
//     response: fasthttp does so only while its own Shutdown is waiting,
//     and when ShutdownWithContext gives up, a connection whose handler
//     was still running would otherwise go on serving requests after the
//     OnShutdown functions ran;
//  4. with Config.Compression, the response is compressed (compress.go).
//
// A detached request (Ctx.Detach: a WebSocket upgrade) skips all four
// when its 101 is held: it is observed and released when its connection
// ends (ctx_detach.go).
//
// Observers therefore see the body as written, before compression. The
// over-capacity 503 (internal/conn), written on a connection before any
// request exists, is observed without this step.
//
// Cost without observers and compression: three branches and one atomic
// load, no allocation.
func (a *App) finish(rc *fasthttp.RequestCtx, c *Ctx, how ending, code string) {
	if c != nil && c.out.detached && a.holdDetached(rc, c) {
		return // observed and released when its connection ends (ctx_detach.go)
	}
	if a.observers != nil && rc.UserValue(observedKey{}) == nil {
		if c == nil {
			c = a.acquireCtx(rc, nil) // the observers' own, released below
		}
		a.observeEnd(c, how, code)
		rc.SetUserValue(observedKey{}, true)
	}
	if c != nil {
		c.release()
	}
	if a.life.stop.begun() {
		rc.SetConnectionClose()
	}
	if a.zip != nil {
		a.zip.apply(rc)
	}
}

// observedKey marks, as a request user value, a request whose observers
// ran, so that a request finished twice (dispatch after a route when the
// router may redirect, ServeError after a failed write under the nethttp
// adapter) is observed once. fasthttp clears user values between
// requests.
type observedKey struct{}
