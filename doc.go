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
// Each step lives in one file; read them in this order:
//
//  1. Accept (connlimit.go). Serve wraps the listener in a limitListener:
//     at most Config.Concurrency connections are open at once, the one
//     beyond is answered with the prebuilt 503 FX_SERVICE_UNAVAILABLE, and
//     temporary accept errors (EMFILE, ...) are retried instead of ending
//     Serve. A connection closed after a transport error, or refused, is
//     closed lingering (linger.go) so that the client reads its response.
//     Each connection enforces Config's read, write and idle timeouts
//     itself, phase by phase, arming socket deadlines lazily (deadline.go).
//  2. Framing check (framing.go). When the header block is read, requests
//     whose framing a proxy could read differently (Content-Length with
//     Transfer-Encoding, obsolete line folding, bare LF) are refused with
//     400 FX_BAD_REQUEST and the connection is closed.
//  3. Transport errors (server.go). What fasthttp cannot hand to a handler
//     (a malformed request, a body or headers over the limit, a read
//     timeout) is answered by transportError with the envelope.
//  4. Path (path.go). The path is percent-decoded and normalised once, and
//     the router matches that same string, so c.Path(), c.Param and the
//     route that runs agree; encodings with no single meaning get 400. A
//     path that is, byte for byte, a route without parameters skips this
//     step: Boot proved such paths come through it unchanged.
//  5. Routing (router.go). Routes without parameters are found in an
//     exact-match table, the others by the fasthttp/router, both built at
//     Boot; an unmatched request gets the 404 FX_NOT_FOUND, written
//     without a Ctx when there is no middleware and no hook (notFound).
//  6. Chain (request.go). serve takes a pooled Ctx (ctx.go states its
//     lifetime) and runs the route's chain level by level: the App's
//     middleware, the Group's, the route's own, then the handler. Each
//     level recovers panics; next() may be called once.
//  7. Contract (contract.go, validation.go). A route with a Body or Query
//     schema validates both before its handler runs; every issue goes into
//     one 422 FX_VALIDATION_ERROR.
//  8. Handler (ctx.go). The handler reads the request and writes the
//     response through the Ctx.
//  9. Boundary (boundary.go). A returned error or a panic becomes the
//     status, code and message the client sees (resolve), is shown to the
//     error hook, and is logged when it is a 5xx; panic values are
//     formatted safely (format.go).
//  10. Envelope (envelope.go). The envelope is written into the response's
//     pooled buffer: escaped by hand, details through go-json; an *Error
//     given to Prebuild (prebuilt.go) has its envelope encoded once.
//  11. Observation (observe.go, outcome.go). Once the response is final,
//     the OnResponse observers see its route pattern, status and error
//     code (404s and transport errors included); with none registered this
//     step costs nothing.
//  12. Compression (compress.go). With Config.Compression, the finished
//     response, envelope included, is compressed as Accept-Encoding allows.
//
// Before the first request, Boot (boot.go) runs plugin Setup functions in
// dependency order (plugin.go), builds the router from the registrations
// (routes.go, group.go) and reports every configuration error at once,
// route conflicts included (conflict.go). Shutdown and its guarantees are
// in server.go and lifecycle.go; the catalog of codes is catalog.go, the
// *Error type fxerror.go.
package fx
