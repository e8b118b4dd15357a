// Package nethttp connects fx to Go's standard library HTTP stack, in both
// directions:
//
//   - Handler serves an fx App from net/http: http.Server (HTTP/1.1, HTTP/2,
//     TLS), httptest, and any runtime that wants an http.Handler.
//   - Wrap mounts an existing http.Handler as an fx route.
//
// Behaviour is the fasthttp path's: the same routes, middleware, hook and
// error envelopes, byte for byte (the package's parity test runs the core
// cases through both transports and compares them). Failures of the
// adapter itself answer 500 FX_NODE_INTERNAL_ERROR, the wire code of the
// original contract's Node adapter, through the App's error boundary, so
// the error hook and the 5xx log see them like any other failure.
//
// # What is translated
//
// Request: method, the request URI as the client sent it, Host, every
// header value (multi-valued headers stay multi-valued; hop-by-hop headers
// are dropped), the body (read fully, up to Config.BodyLimit), the remote
// and local addresses (RequestCtx.RemoteAddr, LocalAddr), and TLS
// (RequestCtx.IsTLS, TLSConnectionState, an https scheme in c.Href()).
//
// Response: status, every header value, cookies (one Set-Cookie per
// cookie), Content-Type exactly as fasthttp would send it, Content-Length,
// the body, and streamed bodies (RequestCtx.SetBodyStream and
// SetBodyStreamWriter), flushed chunk by chunk.
//
// # Cancellation
//
// The adapter makes the *http.Request's context the parent of c.Context()
// (fx.SetRequestContext), so c.Context() is done when the client goes away
// (connection closed, HTTP/2 stream reset) or when the handler chain
// returns: pass it to database calls and outgoing requests so their work
// stops with the client. App.Shutdown does not cancel it, as the
// http.Server owns the request: to stop in-flight handlers on shutdown,
// set http.Server.BaseContext and cancel that context. Context(c) is an
// alias of c.Context(), kept for code written before. A request whose
// context is already done when its body has been read is not dispatched
// at all.
//
// # Not translated
//
// Request and response trailers; RequestCtx.Hijack (the hijack handler is
// never called; net/http handlers that need the connection should be
// served by net/http directly); RequestCtx.Time and ConnRequestNum (zero);
// fasthttp's TimeoutError responses. Errors net/http answers before the
// handler runs (a malformed request line, headers over
// http.Server.MaxHeaderBytes) are net/http's plain-text replies, not
// envelopes: configure the http.Server's limits to suit.
package nethttp
