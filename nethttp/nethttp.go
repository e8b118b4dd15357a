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
// client's: a body cut short or with malformed framing
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
	errTooLarge    = fx.NewCatalogError(fx.ErrorCodes.PayloadTooLarge, "The request body is larger than the server accepts")
	errBadBody     = fx.NewCatalogError(fx.ErrorCodes.BadRequest, "The request could not be parsed")
	errBodyTimeout = fx.NewCatalogError(fx.ErrorCodes.RequestTimeout, "The request was not received in time")
)

func nodeError(msg string) *fx.Error {
	return fx.NewCatalogError(fx.ErrorCodes.NodeInternalError, msg)
}

var errNotAConn = errors.New("nethttp: the connection belongs to net/http; RequestCtx.Conn cannot be read or written")
