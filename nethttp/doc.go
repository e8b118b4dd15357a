// Package nethttp connects fx to Go's standard library HTTP stack, in both
// directions:
//
//   - Handler serves an fx App from net/http: http.Server (HTTP/1.1, HTTP/2,
//     TLS), httptest, and any runtime that wants an http.Handler.
//   - Wrap mounts an existing http.Handler as an fx route.
//
// For example, an App served over HTTP/2 with TLS, with pprof inside it
// (import _ "net/http/pprof"; behind authentication, as profiles and the
// command line are not for the public):
//
//	app := fx.New()
//	app.Get("/users/:id", getUser)
//	app.Group("/debug/pprof", middleware.Auth(authCfg)).Get("/*path", nethttp.Wrap(http.DefaultServeMux))
//	srv := &http.Server{Addr: ":8443", Handler: nethttp.Handler(app)}
//	log.Fatal(srv.ListenAndServeTLS("cert.pem", "key.pem"))
//
// Behaviour is the fasthttp path's: the same routes, middleware, hook and
// error envelopes, byte for byte (the package's parity test runs the core
// cases through both transports and compares them). Failures of the
// adapter itself answer 500 FX_NODE_INTERNAL_ERROR (a wire code clients
// already match on, kept for them), through the App's error boundary, so
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
// Request and response trailers; RequestCtx.Hijack called directly (its
// handler is never called; fx.Ctx.Hijack after a 101 is translated: the
// adapter writes the 101's head, hands the connection net/http gives up
// through http.Hijacker to the hijack function, and ServeHTTP returns
// when that connection is closed, so package websocket serves the same
// way on both transports); RequestCtx.Time and ConnRequestNum (zero);
// fasthttp's TimeoutError responses. Errors net/http answers before the
// handler runs (a malformed request line, headers over
// http.Server.MaxHeaderBytes) are net/http's plain-text replies, not
// envelopes: configure the http.Server's limits to suit.
//
// # Cost
//
// Handler pools the fasthttp.RequestCtx and the body buffer and resets
// them between requests; a request costs the header translation both ways
// (one string per response header value, as net/http's Header map
// requires) on top of the App's own work: a couple of allocations more
// than the fasthttp transport for a small JSON response, and net/http's
// own per-request cost besides. Wrap costs one *http.Request, its header
// map and URL, a context value and the writer per request. The README's
// nethttp section has measured figures.
//
// # Lifetime
//
// The pooled RequestCtx and body buffer are reset once the response has
// been written: nothing of one request is visible to the next. As on the
// fasthttp transport (see fx.Ctx), the Ctx, its RequestCtx and memory that
// aliases them (c.Body()) must not be kept after the handler chain
// returns; the strings Ctx returns are copies and may be. Request(c) is
// valid while c is; its Body has been read already (use c.Body()). What a
// handler mounted with Wrap writes is buffered and sent when it returns;
// a write after that fails.
//
// # Errors
//
// Every failure of the adapter reaches the App's error boundary, so the
// error hook and the 5xx log see it. A body larger than the App's
// Config.BodyLimit (declared or actual) is the 413 FX_PAYLOAD_TOO_LARGE
// *fx.Error, answered without reading the rest. Every other failure is an
// *AdapterError (Op names what failed; Err is the cause):
//
//   - OpReadBody, a body over an http.MaxBytesReader's limit: 413
//     FX_PAYLOAD_TOO_LARGE.
//   - OpReadBody, a body the client framed badly or cut short: 400
//     FX_BAD_REQUEST; one not received within the http.Server's
//     ReadTimeout: 408 FX_REQUEST_TIMEOUT (the words fasthttp's transport
//     uses).
//   - OpReadBody for any other reason, OpWriteResponse (a status net/http
//     cannot send, a failed write) and OpServe (a panic in the adapter):
//     500 FX_NODE_INTERNAL_ERROR, with a fixed message.
//   - OpTranslateRequest: Wrap could not build an *http.Request from the
//     fx request: 500 FX_NODE_INTERNAL_ERROR.
//
// A failure after the status was sent cannot change it: the response is
// aborted (http.ErrAbortHandler), so the client sees a broken response,
// never a silently truncated one. A panic in a wrapped handler, or an
// error it reports with Fail, is the App's own failure, with its own code.
package nethttp
