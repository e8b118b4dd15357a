package fx

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"strings"
	"unsafe"

	"github.com/valyala/fasthttp"
)

// This file is the error boundary: the one place where failures of
// handlers and middleware (returned errors and panics alike) are caught,
// shown to the error hook, logged and turned into the JSON envelope.
//
// Cost model: a request that succeeds pays one deferred recover per chain
// level. A failing request with an *Error (or the 404) and no hook writes
// its envelope into the response's pooled body buffer with no allocation;
// the production 500 body is prebuilt. A hook adds a header snapshot;
// logging (5xx only) costs what the slog handler costs, and a panic's stack
// is captured only when the logger is enabled at error level.

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

// serve runs one request through a route's chain and the boundary.
func (a *App) serve(rc *fasthttp.RequestCtx, rt *route) {
	c := a.acquireCtx(rc, rt)
	a.startObserving(c) // observe: OnResponse's clock (observe.go)
	if err := c.runLevel(0); err != nil {
		a.handleError(c, err)
	}
	a.finishObserving(c) // observe: runs OnResponse observers (observe.go)
	a.releaseCtx(c)
	a.closeIfStopping(rc)
}

// closeIfStopping ends the connection after this response once Shutdown
// has begun. fasthttp does so only while its own Shutdown is waiting: when
// ShutdownWithContext gives up, a connection whose handler was still
// running would otherwise go on serving requests after the OnShutdown
// functions ran.
func (a *App) closeIfStopping(rc *fasthttp.RequestCtx) {
	if a.stopping.Load() {
		rc.SetConnectionClose()
	}
}

// runLevel runs chain level i (middleware i, or the handler past the last
// one) and turns a panic into a *PanicError. The level is dispatched here
// rather than in a helper: a panic's cost is mostly the runtime unwinding
// frames, so one frame less is measurably cheaper.
func (c *Ctx) runLevel(i int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = c.recovered(i, r)
		}
	}()
	if i < len(c.rt.chain) {
		return c.rt.chain[i](c, c.next)
	}
	return c.rt.handler(c)
}

// recovered wraps a panic value caught at level i. At level 0 only the
// boundary sees the error, so the PanicError lives in the pooled Ctx and
// the panic costs no allocation; deeper, a middleware's next() receives it
// and may keep it, so it is allocated.
func (c *Ctx) recovered(i int, r any) error {
	if pe, ok := r.(*PanicError); ok { // re-panicked by a middleware
		return pe
	}
	pe := &c.topPanic
	if i > 0 {
		pe = new(PanicError)
	}
	*pe = PanicError{Value: r}
	if c.app.logger.Enabled(context.Background(), slog.LevelError) {
		pe.Stack = debug.Stack()
	}
	return pe
}

// ServeError runs the error boundary for a failure that happened outside
// any handler, such as a transport adapter failing to translate a request:
// the hook sees err, 5xx are logged, and rc receives the envelope. err is
// usually an *Error; any other value gives the 500 FX_INTERNAL_ERROR.
func (a *App) ServeError(rc *fasthttp.RequestCtx, err any) {
	a.Boot() //nolint:errcheck // a failed boot still has a working boundary
	c := a.acquireCtx(rc, nil)
	e, ok := err.(error)
	if !ok || e == nil {
		e = &PanicError{Value: err}
	}
	a.handleError(c, e)
	a.observeServeError(c) // observe: OnResponse (observe.go)
	a.releaseCtx(c)
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
	raw := any(err)
	if pe, ok := err.(*PanicError); ok {
		raw = pe.Value
	}
	status, code, msg, details := a.resolve(err, raw)
	c.out.code = code // observe: Ctx.ErrorCode, also when the hook writes the response
	if status >= 500 {
		a.logFailure(c, code, err)
	}
	if a.hook != nil && a.callHook(c, raw, status) {
		return
	}
	a.writeEnvelope(&c.rc.Response, status, code, msg, details)
}

// boundaryFailed is the last resort when the boundary itself panicked:
// the prebuilt production 500, and a log line if logging works.
func (a *App) boundaryFailed(c *Ctx, r any) {
	resp := &c.rc.Response
	c.out.code = ErrorCodes.InternalError // observe: Ctx.ErrorCode
	resp.ResetBody()
	resp.Header.Del(fasthttp.HeaderContentEncoding)
	resp.SetStatusCode(fasthttp.StatusInternalServerError)
	resp.Header.SetContentTypeBytes(contentTypeJSON)
	resp.SetBodyRaw(prebuiltInternal)
	defer func() { recover() }() //nolint:errcheck // the logger itself may be what panicked
	a.logger.LogAttrs(context.Background(), slog.LevelError, "fx: error boundary panicked; sent 500",
		c.withLogAttrs(slog.String("method", c.Method()), slog.String("path", string(c.rc.URI().PathOriginal())), // observe: request log attributes
			slog.String("panic", formatValue(r)))...)
}

// resolve maps a failure to what the client sees.
func (a *App) resolve(err error, raw any) (status int, code, msg string, details any) {
	// observe: the status rule is classify's, shared with Resolve (outcome.go)
	fe, status, code := classify(err)
	if fe == nil { // no *Error in the chain, or a typed nil *Error was returned
		if a.cfg.Development {
			return status, code, describe(raw), nil
		}
		return status, code, internalErrorMessage, nil
	}
	msg, details = fe.Message, fe.Details
	if status != fe.Status { // observe: classify sent it as 500
		a.misuse("status", code, fmt.Sprintf("fx: *Error %s has status %d, outside 400-599; sent as 500", code, fe.Status))
	}
	if strings.HasPrefix(code, "FX_") {
		if _, known := StatusOf(code); !known {
			a.misuse("code", code, "fx: error code "+code+" uses the reserved FX_ prefix but is not a built-in code")
		}
	}
	if code == ErrorCodes.InternalError && !a.cfg.Development {
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

// describe renders a raw failure for Development mode.
func describe(v any) string {
	switch v := v.(type) {
	case error:
		return v.Error()
	case string:
		return v
	}
	return formatValue(v)
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
		c.hookDeclined(resp) // observe: rule 4, what a declining hook keeps (hookrule.go)
	}
	return handled
}

func (a *App) invokeHook(c *Ctx, raw any) (handled bool) {
	defer func() {
		if r := recover(); r != nil {
			handled = false
			c.out.hookPanicked = true // observe: nothing it wrote is kept (hookrule.go)
			a.logger.LogAttrs(context.Background(), slog.LevelError, "fx: error hook panicked; sending the default envelope",
				c.withLogAttrs(slog.String("method", c.Method()), slog.String("path", c.Path()), // observe: request log attributes
					slog.Any("panic", loggable(r)), slog.Any("error", loggable(raw)))...)
		}
	}()
	return a.hook(c, raw)
}

// logFailure logs a 5xx with method, path, code and the raw error.
func (a *App) logFailure(c *Ctx, code string, err error) {
	ctx := context.Background()
	if !a.logger.Enabled(ctx, slog.LevelError) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", c.Method()),
		slog.String("path", string(c.rc.URI().PathOriginal())),
		slog.String("code", code),
	}
	if pe, ok := err.(*PanicError); ok {
		attrs = append(attrs, slog.Any("panic", loggable(pe.Value)))
		if pe.Stack != nil {
			attrs = append(attrs, slog.String("stack", string(pe.Stack)))
		}
	} else {
		attrs = append(attrs, slog.Any("error", err))
	}
	attrs = append(attrs, c.out.attrs...) // observe: request log attributes (logattrs.go)
	a.logger.LogAttrs(ctx, slog.LevelError, "fx: request failed", attrs...)
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
	if code == ErrorCodes.InternalError && msg == internalErrorMessage && details == nil {
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
var prebuiltInternal = AppendEnvelope(nil, &Error{Code: ErrorCodes.InternalError, Message: internalErrorMessage})

// notFound answers an unmatched route. Without middleware or hook the
// envelope is written directly (no Ctx, no allocation); otherwise the
// request goes through the middleware chain to a handler that returns the
// FX_NOT_FOUND *Error, so middleware (CORS, request IDs, logging) and the
// hook see 404s like any other failure.
func (a *App) notFound(rc *fasthttp.RequestCtx) {
	if len(a.notFoundRoute.chain) > 0 || a.hook != nil {
		a.serve(rc, a.notFoundRoute)
		return
	}
	resp := &rc.Response
	resp.SetStatusCode(fasthttp.StatusNotFound)
	resp.Header.SetContentTypeBytes(contentTypeJSON)
	b := takeBody(resp)
	b = append(b, notFoundPrefix...)
	b = appendJSONInner(b, b2s(rc.Method()))
	b = append(b, ' ')
	b = appendJSONInner(b, b2s(rc.URI().PathOriginal()))
	b = append(b, notFoundSuffix...)
	resp.SwapBody(b)
	a.observeNotFound(rc) // observe: OnResponse (observe.go)
	a.closeIfStopping(rc)
}

var (
	notFoundPrefix = []byte(`{"error":{"code":"FX_NOT_FOUND","message":"Route `)
	notFoundSuffix = []byte(` not found"}}`)
)

// notFoundHandler is the handler of the not-found route (used when there is
// middleware or a hook).
func notFoundHandler(c *Ctx) error {
	return catalogError(ErrorCodes.NotFound,
		"Route "+c.Method()+" "+string(c.rc.URI().PathOriginal())+" not found")
}

// b2s views b as a string without copying; the result must not outlive b's
// current contents (used only to pass request bytes to the escaper).
func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Panic values are arbitrary: fmt (and so slog's text handlers) recurses
// forever on a map or slice that contains itself, which would crash the
// whole process with a stack overflow. Before a panic value is formatted
// or logged, printable checks it; one that is cyclic, or too large to
// check within a small budget, is shown by its type only.

// formatValue is fmt.Sprint(v), or a placeholder naming v's type when
// printing v is unsafe.
func formatValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case error:
		return v.Error()
	case fmt.Stringer:
		return v.String()
	}
	if !printable(v) {
		return fmt.Sprintf("(%T: cyclic or too large to print)", v)
	}
	return fmt.Sprint(v)
}

// loggable returns v for a log attribute, or formatValue's placeholder
// when formatting v is unsafe.
func loggable(v any) any {
	switch v.(type) {
	case nil, string, error, fmt.Stringer, bool, int, int64, uint64, float64:
		return v
	}
	if !printable(v) {
		return formatValue(v)
	}
	return v
}

// printable reports whether fmt can print v in bounded time: no map or
// slice of v contains itself, and v has at most a few thousand elements.
// Like fmt, it follows a pointer only at the top level.
func printable(v any) bool {
	w := cycleWalker{onPath: map[uintptr]bool{}, budget: 4096}
	return w.walk(reflect.ValueOf(v), 0)
}

type cycleWalker struct {
	onPath map[uintptr]bool
	budget int
}

func (w *cycleWalker) walk(v reflect.Value, depth int) bool {
	if w.budget--; w.budget < 0 {
		return false
	}
	switch v.Kind() {
	case reflect.Interface:
		return v.IsNil() || w.walk(v.Elem(), depth+1)
	case reflect.Pointer:
		return depth > 0 || v.IsNil() || w.walk(v.Elem(), depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			if !w.walk(v.Field(i), depth+1) {
				return false
			}
		}
	case reflect.Map, reflect.Slice, reflect.Array:
		if v.Kind() != reflect.Array {
			if v.IsNil() {
				return true
			}
			p := v.Pointer()
			if w.onPath[p] {
				return false
			}
			w.onPath[p] = true
			defer delete(w.onPath, p)
		}
		if v.Kind() == reflect.Map {
			for it := v.MapRange(); it.Next(); {
				if !w.walk(it.Key(), depth+1) || !w.walk(it.Value(), depth+1) {
					return false
				}
			}
			return true
		}
		if k := v.Type().Elem().Kind(); k <= reflect.Complex128 || k == reflect.String {
			return true // flat elements: fmt prints them in linear time
		}
		for i := range v.Len() {
			if !w.walk(v.Index(i), depth+1) {
				return false
			}
		}
	}
	return true
}
