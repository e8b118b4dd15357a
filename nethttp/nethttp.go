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

import (
	"errors"

	"github.com/fxhq/fx"
)

// AdapterError is a failure of the adapter itself: the request or the
// response could not be translated between net/http and fx, or the adapter
// panicked. It reaches the App's error boundary as is (the error hook
// receives the *AdapterError) and answers 500 FX_NODE_INTERNAL_ERROR with a
// fixed message that never includes the cause; the cause is in Err, and in
// the 5xx log line. The exception is an OpReadBody failure that is the
// client's (see readerr.go): a body cut short or with malformed framing
// answers 400 FX_BAD_REQUEST, one too slow for the server's read deadline
// 408 FX_REQUEST_TIMEOUT, one over http.MaxBytesReader's limit 413
// FX_PAYLOAD_TOO_LARGE.
//
// errors.As(err, &fxErr) on an *AdapterError finds the wire *fx.Error
// (FX_NODE_INTERNAL_ERROR, or the client-fault code above); errors.Is and
// errors.As also reach Err (for example io.ErrUnexpectedEOF when the client
// hung up in the middle of its body).
type AdapterError struct {
	// Op names what failed: OpReadBody, OpWriteResponse or OpServe.
	Op string
	// Err is the cause. For a panic (OpServe) it is an *fx.PanicError
	// holding the raw panic value and the stack.
	Err error
}

// The operations an AdapterError reports.
const (
	// OpReadBody: reading the request body failed (the client hung up, the
	// body reader failed or panicked).
	OpReadBody = "read request body"
	// OpWriteResponse: the response could not be expressed in net/http (a
	// status outside 200-999) or writing it failed (the client hung up).
	OpWriteResponse = "write response"
	// OpServe: the adapter panicked outside of fx's own handler chain.
	OpServe = "serve"
)

// Error returns "nethttp: <op>: <cause>".
func (e *AdapterError) Error() string {
	if e.Err == nil {
		return "nethttp: " + e.Op
	}
	return "nethttp: " + e.Op + ": " + e.Err.Error()
}

// Unwrap returns the FX_NODE_INTERNAL_ERROR *fx.Error first, then Err, so
// the boundary answers with the adapter's code even when Err is itself an
// *fx.Error.
func (e *AdapterError) Unwrap() []error {
	wire := errServe
	switch e.Op {
	case OpReadBody:
		wire = bodyReadWire(e.Err) // 400, 408 or 413 when the client is at fault
	case OpWriteResponse:
		wire = errWriteResponse
	}
	if e.Err == nil {
		return []error{wire}
	}
	return []error{wire, e.Err}
}

// The wire errors. They are shared: treat them as read-only.
var (
	errReadBody      = nodeError("The request body could not be read")
	errWriteResponse = nodeError("The response could not be sent")
	errServe         = nodeError("The request could not be served")

	// errTooLarge, errBadBody and errBodyTimeout are what fasthttp's own
	// transport answers for the same request (fx's transport error
	// handler), word for word.
	errTooLarge = fx.NewError(fx.ErrorStatus[fx.ErrorCodes.PayloadTooLarge],
		fx.ErrorCodes.PayloadTooLarge, "The request body is larger than the server accepts")
	errBadBody = fx.NewError(fx.ErrorStatus[fx.ErrorCodes.BadRequest],
		fx.ErrorCodes.BadRequest, "The request could not be parsed")
	errBodyTimeout = fx.NewError(fx.ErrorStatus[fx.ErrorCodes.RequestTimeout],
		fx.ErrorCodes.RequestTimeout, "The request was not received in time")
)

func nodeError(msg string) *fx.Error {
	return fx.NewError(fx.ErrorStatus[fx.ErrorCodes.NodeInternalError], fx.ErrorCodes.NodeInternalError, msg)
}

var errNotAConn = errors.New("nethttp: the connection belongs to net/http; RequestCtx.Conn cannot be read or written")
