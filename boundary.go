package fx

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/valyala/fasthttp"
)

// This file is the error boundary: the one place where failures of
// handlers and middleware (returned errors and panics alike) are caught,
// shown to the error hook, logged and turned into the JSON envelope.
//
// Cost model: a request that succeeds pays one deferred recover per chain
// level. A failing request with an *Error (or the 404) and no hook writes
// its envelope into the response's pooled body buffer with no allocation;
// the production 500 body is prebuilt, and so is the envelope of an *Error
// given to Prebuild (prebuilt.go), which is copied instead of encoded. A hook adds a header snapshot;
// logging (5xx only) costs what the slog handler costs, and a panic's stack
// is captured only when the logger is enabled at error level (logged as
// one string in production, one array element per frame in Development).

// PanicError is the error a panic becomes on its way through the chain: a
// middleware that calls next() receives it like any returned error, so it
// can handle panics of inner handlers the same way. The error hook never
// sees a PanicError the middleware returned unchanged: it gets Value, the
// value that was passed to panic.
type PanicError struct {
	// Value is what was passed to panic.
	Value any
	// Stack is the panicking goroutine's stack, captured only when the
	// App's logger is enabled at error level (nil otherwise).
	Stack []byte
}

// Error returns "panic: " and the value.
func (p *PanicError) Error() string { return "panic: " + formatValue(p.Value) }

// Unwrap returns Value when it is an error, so errors.As finds an *Error
// that was panicked.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// ServeError runs the error boundary for a failure that happened outside
// any handler, such as a transport adapter failing to translate a request:
// the hook sees err, 5xx are logged, and rc receives the envelope. err is
// usually an *Error; any other value gives the 500 FX_INTERNAL_ERROR.
func (a *App) ServeError(rc *fasthttp.RequestCtx, err any) {
	_ = a.Boot() // a failed boot still has a working boundary
	c := a.acquireCtx(rc, nil)
	e, ok := err.(error)
	if !ok || e == nil {
		e = &PanicError{Value: err}
	}
	a.handleError(c, e)
	a.finish(rc, c, served, "")
}

// handleError is the boundary proper.
func (a *App) handleError(c *Ctx, err error) {
	// The boundary runs user code too (an error's Error or MarshalJSON
	// method, slog handlers): if any of it panics, the client still gets
	// the production 500 envelope and the server keeps running.
	defer func() {
		if r := recover(); r != nil {
			a.boundaryFailed(c, r)
		}
	}()
	raw, status, code, msg, details := a.judge(c, err)
	if a.hook != nil && a.callHook(c, raw, status) {
		return
	}
	if body := prebuiltBody(raw, code, msg, details); body != nil { // (*Error).Prebuild (prebuilt.go)
		writePrebuilt(&c.rc.Response, status, body)
		return
	}
	a.writeEnvelope(&c.rc.Response, status, code, msg, details)
}

// judge is the part of the boundary that writes nothing: it resolves err
// (raw is what the hook would see: a panic's value, else err), records
// the code (Ctx.ErrorCode, also when the hook then writes the response)
// and logs a 5xx (logFailure). handleError writes the response after it;
// a failure that comes once the response has left ends with judge alone
// (failedAfterResponse).
func (a *App) judge(c *Ctx, err error) (raw any, status int, code, msg string, details any) {
	raw = any(err)
	if pe, ok := err.(*PanicError); ok {
		raw = pe.Value
	}
	status, code, msg, details = a.resolve(err, raw)
	c.out.code = code
	if status >= 500 {
		a.logFailure(c, code, err)
	}
	return raw, status, code, msg, details
}

// failedAfterResponse is the boundary for a failure that comes after the
// response left, when nothing more can be written to the client: a
// request held past its 101 whose connection ended with err (Ctx.Detach's
// end). err is judged as a handler's returned error or panic (a
// *PanicError) is: the code the observers see, and for a 5xx the one log
// line every failing request gets, with the same keys. No hook runs and
// nothing is written. If judging panics (user code: an error's Error
// method, the slog handler), the code is FX_INTERNAL_ERROR and the panic
// is logged if logging works.
func (a *App) failedAfterResponse(c *Ctx, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.out.code = codeInternalError
			a.logBoundaryPanic(c, "fx: error boundary panicked", r)
		}
	}()
	a.judge(c, err)
}

// boundaryFailed is the last resort when the boundary itself panicked:
// the prebuilt production 500, and a log line if logging works.
func (a *App) boundaryFailed(c *Ctx, r any) {
	resp := &c.rc.Response
	c.out.code = codeInternalError // Ctx.ErrorCode
	resp.ResetBody()
	resp.Header.Del(fasthttp.HeaderContentEncoding)
	resp.SetStatusCode(fasthttp.StatusInternalServerError)
	resp.Header.SetContentTypeBytes(contentTypeJSON)
	resp.SetBodyRaw(prebuiltInternal)
	a.logBoundaryPanic(c, "fx: error boundary panicked; sent 500", r)
}

// logBoundaryPanic logs msg for r, a panic of the boundary itself, unless
// the logger is what panicked.
func (a *App) logBoundaryPanic(c *Ctx, msg string, r any) {
	defer func() { _ = recover() }() // the logger itself may be what panicked
	a.logger.LogAttrs(context.Background(), slog.LevelError, msg,
		c.withLogAttrs(slog.String("method", c.Method()), slog.String("path", string(c.rc.URI().PathOriginal())),
			slog.String("panic", formatValue(r)))...)
}

// resolve maps a failure to what the client sees.
func (a *App) resolve(err error, raw any) (status int, code, msg string, details any) {
	// The status rule is classify's, shared with Resolve (below).
	fe, status, code := classify(err)
	if fe == nil { // no *Error in the chain, or a typed nil *Error was returned
		if a.cfg.Development {
			return status, code, describe(raw), nil
		}
		return status, code, internalErrorMessage, nil
	}
	msg, details = fe.Message, fe.Details
	if status != fe.Status { // classify sent it as 500
		a.misuse("status", code, fmt.Sprintf("fx: *Error %s has status %d, outside 400-599; sent as 500", code, fe.Status))
	}
	if strings.HasPrefix(code, "FX_") {
		if _, known := statusOf(code); !known {
			a.misuse("code", code, "fx: error code "+code+" uses the reserved FX_ prefix but is not a built-in code")
		}
	}
	if code == codeInternalError && !a.cfg.Development {
		msg, details = internalErrorMessage, nil
	}
	return status, code, msg, details
}

// findError is errors.As for *Error without its costs on the common
// shapes: it walks Unwrap() error and Unwrap() []error chains by type
// assertion (no reflection, no allocation) and falls back to a target that
// escapes only for a chain element with an As method.
func findError(err error) *Error {
	for err != nil {
		if fe, ok := err.(*Error); ok {
			return fe
		}
		if x, ok := err.(interface{ As(any) bool }); ok {
			if fe := asMethod(x); fe != nil {
				return fe
			}
		}
		switch x := err.(type) {
		case interface{ Unwrap() error }:
			err = x.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				if fe := findError(e); fe != nil {
					return fe
				}
			}
			return nil
		default:
			return nil
		}
	}
	return nil
}

func asMethod(x interface{ As(any) bool }) *Error {
	var fe *Error
	if x.As(&fe) {
		return fe
	}
	return nil
}

// callHook gives the hook the raw value. It reports whether the hook
// handled the response; when it did not (false or a panic), everything
// the hook wrote is undone.
func (a *App) callHook(c *Ctx, raw any, status int) (handled bool) {
	resp := &c.rc.Response
	resp.Header.CopyTo(&c.hdrSnap)
	resp.ResetBody()
	dropContentEncoding(resp) // it described the body just discarded
	resp.SetStatusCode(status)
	handled = a.invokeHook(c, raw)
	if !handled {
		c.hookDeclined(resp) // what a declining hook keeps (docs/errors.md, "The error hook")
	}
	return handled
}

func (a *App) invokeHook(c *Ctx, raw any) (handled bool) {
	defer func() {
		if r := recover(); r != nil {
			handled = false
			c.out.hookPanicked = true // nothing it wrote is kept (hookDeclined)
			a.logger.LogAttrs(context.Background(), slog.LevelError, "fx: error hook panicked; sending the default envelope",
				c.withLogAttrs(slog.String("method", c.Method()), slog.String("path", c.Path()),
					slog.Any("panic", loggable(r)), slog.Any("error", loggable(raw)))...)
		}
	}()
	return a.hook(c, raw)
}

// logFailure logs a 5xx with method, path, code and the raw error, at
// error level; a 503 FX_SERVICE_UNAVAILABLE answered once Shutdown has
// begun (readiness turning to 503, a WebSocket route refusing) is what a
// normal shutdown answers, logged at info level as "fx: request refused
// during shutdown". A panic's stack is an array of frames in Development
// mode (stackFrames), the raw stack as one string in production.
func (a *App) logFailure(c *Ctx, code string, err error) {
	ctx := context.Background()
	level, msg := slog.LevelError, "fx: request failed"
	if code == codeServiceUnavailable && a.life.stop.begun() {
		level, msg = slog.LevelInfo, "fx: request refused during shutdown"
	}
	if !a.logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", c.Method()),
		slog.String("path", string(c.rc.URI().PathOriginal())),
		slog.String("code", code),
	}
	if pe, ok := err.(*PanicError); ok {
		attrs = append(attrs, slog.Any("panic", loggable(pe.Value)))
		switch {
		case pe.Stack == nil:
		case a.cfg.Development: // one element per frame (panicformat.go)
			attrs = append(attrs, slog.Any("stack", stackFrames(pe.Stack)))
		default: // one string: one line in any handler
			attrs = append(attrs, slog.String("stack", string(pe.Stack)))
		}
	} else {
		attrs = append(attrs, slog.Any("error", err))
	}
	attrs = append(attrs, c.out.attrs...) // the request's log attributes (Ctx.AddLogAttrs)
	a.logger.LogAttrs(ctx, level, msg, attrs...)
}

// misuse logs a programming error once per (kind, key).
func (a *App) misuse(kind, key, msg string) {
	if _, seen := a.misused.LoadOrStore(kind+"\x00"+key, struct{}{}); !seen {
		a.logger.Warn(msg)
	}
}

// writeEnvelope replaces status, body and content type of resp with the
// envelope; other headers already set are kept.
func (a *App) writeEnvelope(resp *fasthttp.Response, status int, code, msg string, details any) {
	dropContentEncoding(resp)
	resp.SetStatusCode(status)
	resp.Header.SetContentTypeBytes(contentTypeJSON)
	if code == codeInternalError && msg == internalErrorMessage && details == nil {
		resp.SetBodyRaw(prebuiltInternal) // replaces any body
		return
	}
	b := takeBody(resp)
	b, derr := appendEnvelope(b, code, msg, details)
	resp.SwapBody(b)
	if derr != nil {
		a.logger.LogAttrs(context.Background(), slog.LevelError, "fx: error details", slog.String("code", code), slog.Any("error", derr))
	}
}

// dropContentEncoding removes a Content-Encoding, which described a body
// that is being replaced.
func dropContentEncoding(resp *fasthttp.Response) {
	if len(resp.Header.ContentEncoding()) > 0 { // Del costs a header-name normalisation
		resp.Header.Del(fasthttp.HeaderContentEncoding)
	}
}

// takeBody empties resp's body and returns its buffer, truncated, for the
// caller to append to and hand back with SwapBody. Unlike ResetBody it does
// not return the buffer to fasthttp's pool only to take it again.
func takeBody(resp *fasthttp.Response) []byte {
	if resp.IsBodyStream() {
		resp.ResetBody() // closes the stream; SwapBody would read it
	}
	return resp.SwapBody(nil)[:0]
}

// prebuiltInternal is the production 500 body.
var prebuiltInternal = AppendEnvelope(nil, &Error{Code: codeInternalError, Message: internalErrorMessage})

// What an error hook that declines keeps. The boundary
// snapshots the response headers before calling the hook (callHook), then
// gives the hook an empty body. When the hook returns false:
//
//   - if it wrote no body, the header changes it made are kept (added,
//     changed and removed headers: a request ID, Retry-After, a cookie), so
//     a hook can decorate the default envelope; its status is discarded,
//     and Content-Type, Content-Length and Content-Encoding are the
//     envelope's own whatever the hook set (writeEnvelope sets the first,
//     drops the last, fasthttp computes the length from the body);
//   - if it wrote a body (any byte, or a body stream), it was writing a
//     response of its own and changed its mind: the snapshot is restored,
//     so none of its headers, and nothing of its body or status, reaches
//     the client.
//
// A hook that panics is undone entirely, like one that wrote a body.

// hookDeclined undoes, by the rule above, what a hook that did not handle
// the failure wrote to resp.
func (c *Ctx) hookDeclined(resp *fasthttp.Response) {
	if c.out.hookPanicked || resp.IsBodyStream() || len(resp.Body()) > 0 {
		c.hdrSnap.CopyTo(&resp.Header)
	}
	resp.ResetBody()
}

// The outcome of a failure is knowable before the boundary writes it:
// Resolve tells a middleware what status and code an error returned by
// next() will produce, Ctx.WriteError (ctx_response.go) writes that
// envelope itself, and Ctx.Status and Ctx.ErrorCode (ctx.go) report what
// the response is. The status rule lives once, in classify: the boundary's
// resolve, Resolve and WriteError all go through it, so what a middleware
// learns is what the client gets.

// Resolve returns the status and code the error boundary sends for err
// when no error hook replaces the response: the Status and Code of the
// first *Error in err's chain (found as errors.As finds it, also inside a
// *PanicError whose value is an *Error), a status outside 400-599 sent as
// 500; for anything else (a plain error, a panic value, a typed nil
// *Error), 500 and FX_INTERNAL_ERROR. Development mode changes only
// messages, never status or code, so Resolve needs no App. A nil err gives
// 0 and "" (nothing failed: the response is what the handler wrote, see
// Ctx.Status).
//
// A middleware calls it after next() returns an error, to log, count or
// decorate by the outcome before the boundary writes the envelope:
//
//	if err := next(); err != nil {
//		if status, _ := fx.Resolve(err); status == 503 {
//			c.SetHeader("Retry-After", "5")
//		}
//		return err
//	}
//
// An error hook that returns true may send another status; the code
// stays the error's (Ctx.ErrorCode). Cost: a type assertion for an *Error,
// a walk of the Unwrap chain otherwise; no allocation.
func Resolve(err error) (status int, code string) {
	if err == nil {
		return 0, ""
	}
	_, status, code = classify(err)
	return status, code
}

// classify is the boundary's rule for the status and code of err (see
// Resolve), and the *Error they come from (nil: 500 FX_INTERNAL_ERROR).
// App.resolve adds the message, the details and the misuse reports.
func classify(err error) (fe *Error, status int, code string) {
	fe, ok := err.(*Error)
	if !ok {
		fe = findError(err)
	}
	if fe == nil { // no *Error in the chain, or a typed nil *Error was returned
		return nil, 500, codeInternalError
	}
	status = fe.Status
	if status < 400 || status > 599 {
		status = 500
	}
	return fe, status, fe.Code
}
