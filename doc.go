// Package fx is a web framework on fasthttp for latency-sensitive services,
// built around one promise: every failure reaches the client as a JSON
// envelope with a stable code and the right status,
//
//	{"error":{"code":"FX_NOT_FOUND","message":"Route GET /nope not found"}}
//
// at a cost close to raw fasthttp.
//
// Handlers return an error (or panic); middleware wraps the rest of the
// chain through next(); one error boundary (boundary.go) turns whatever
// went wrong into the envelope, after showing it to the optional error
// hook. The codes the framework emits are the Code constants (CodeNotFound,
// ...) with their status from StatusOf (catalog.go).
//
// Cost model: contexts are pooled, the middleware chain of each route is
// built once at Boot, and the next() guard is a counter. The 404 and an
// *Error kept in a variable are answered without allocating (on a static
// route: fasthttp/router allocates for :param values); c.JSON costs
// at most the interface conversion of its argument.
//
// # The life of one request
//
// Each step lives in one file; read them in this order. Every source file
// of the package is named below.
//
//  1. Accept (the connection layer, package internal/conn). Serve wraps
//     the listener (connListener, server.go): at most Config.Concurrency
//     connections are open at once, the one beyond is answered with the
//     prebuilt 503 FX_SERVICE_UNAVAILABLE the core hands the layer, and
//     temporary accept errors (EMFILE, ...) are retried instead of ending
//     Serve. A connection closed after a transport error, or refused, is
//     closed lingering so that the client reads its response. Each
//     connection enforces Config's read, write and idle timeouts itself,
//     phase by phase, arming socket deadlines lazily.
//  2. Framing check (internal/conn). When the header block is read,
//     requests whose framing a proxy could read differently
//     (Content-Length with Transfer-Encoding, obsolete line folding, a
//     field name that is not a token) are refused with 400 FX_BAD_REQUEST
//     and the connection is closed; a bare LF ending a line is accepted,
//     as fasthttp accepts it. The layer imports nothing of this
//     package: the core gives it the 503 writer and the refusal observer
//     (observeRefusal, observe.go) and maps its faults to catalog codes.
//  3. Transport errors (server.go). What fasthttp cannot hand to a handler
//     (a malformed request, a body or headers over the limit, a read
//     timeout) is answered by transportError with the envelope.
//  4. Dispatch (request.go). dispatch finds what answers the request: a
//     path that is, byte for byte, a route without parameters runs that
//     route at once (the static table, router.go: Boot proved such paths
//     come through the next step unchanged); any other path is
//     percent-decoded and normalised once (path.go), so that the router,
//     c.Path() and c.Param agree, and an encoding with no single meaning
//     gets 400 (refusePath).
//  5. Routing (router.go). The fasthttp/router, built at Boot, matches the
//     rest; an unmatched request gets the 404 FX_NOT_FOUND, written without
//     a Ctx when there is no middleware and no hook (notFound, request.go).
//     A path whose first segment begins with a byte no route's does gets
//     that 404 without the router's walk (routeHeads, router.go).
//  6. Chain (request.go). serve takes a pooled Ctx (ctx.go states its
//     lifetime) and runs the route's chain level by level: the App's
//     middleware, the Group's, the route's own, then the handler. Each
//     level recovers panics; next() may be called once.
//  7. Contract (contract.go, validation.go). A route with a Body or Query
//     schema validates both before its handler runs; every issue goes into
//     one 422 FX_VALIDATION_ERROR. A typed operation (op.go) binds its
//     input struct and derives that contract from its tags.
//  8. Handler (ctx_request.go, ctx_response.go, ctx_client.go,
//     ctx_stream.go). The handler reads the request and writes the
//     response through the Ctx, whose methods are grouped by concern:
//     reading, writing, the client's address, streaming; ctx.go holds its
//     lifecycle.
//  9. Boundary (boundary.go). A returned error or a panic becomes the
//     status, code and message the client sees (resolve, Resolve), is
//     shown to the error hook, and is logged when it is a 5xx; panic values
//     and stacks are formatted safely (panicformat.go).
//  10. Envelope (envelope.go). The envelope is written into the response's
//     pooled buffer: escaped by hand, details through go-json; an *Error
//     given to Prebuild (prebuilt.go) has its envelope encoded once.
//  11. Finish (request.go). Every request answered through a RequestCtx,
//     whichever way it ended (a route, the 404, a refused path, a redirect,
//     a transport error, ServeError, a failed boot), leaves through
//     finish: the OnResponse observers see its route pattern, status and
//     error code (observe.go; with none registered this costs nothing),
//     the Ctx goes back to the pool, the connection is closed once
//     Shutdown has begun, and with Config.Compression the response,
//     envelope included, is compressed as Accept-Encoding allows
//     (compress.go, compress_accept.go).
//
// Before the first request, New (app.go: App, Config and their defaults)
// takes the registrations: routes and Groups (router.go, group.go), what
// routes and middleware document and declare for the OpenAPI document
// (routeinfo.go, declare.go), plugins (plugin.go). Boot (boot.go) runs
// plugin Setup functions in dependency order, builds the router and
// reports every configuration error at once, route conflicts included.
// Listen, Serve and Shutdown are in server.go (ServeTLS in listen_tls.go),
// the wait for a complete shutdown in lifecycle.go, Run's signals and
// grace period in run.go; App.Test and TestRaw serve in memory
// (apptest.go). The catalog of codes is catalog.go, the *Error type
// fxerror.go. Health probes (package health) and static files (package
// static) are kit built on the core, outside it.
//
// Where do timeouts live: in internal/conn (read, write, idle: phase
// deadlines per connection), and in the core only as Config fields
// (ReadTimeout, WriteTimeout, IdleTimeout), the request deadline of a Ctx
// (SetDeadline and Context in ctx.go, on which middleware.Timeout
// builds), a stream's per-flush write deadline (ctx_stream.go), and the
// bounds of a shutdown (ShutdownWithContext in server.go, Run's grace
// period in run.go), outside the core in a health check's
// health.Config.Timeout (package health).
package fx
