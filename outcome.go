package fx

// This file makes the outcome of a failure knowable before the boundary
// writes it: Resolve tells a middleware what status and
// code an error returned by next() will produce, WriteError writes that
// envelope itself, and Ctx.Status and Ctx.ErrorCode report what the
// response is. The status rule lives once, in classify: the boundary's
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
		return nil, 500, CodeInternalError
	}
	status = fe.Status
	if status < 400 || status > 599 {
		status = 500
	}
	return fe, status, fe.Code
}

// Status returns the response status as it stands: in a middleware before
// or after next(), what has been written so far (200 until something sets
// it); inside an OnResponse observer, the final status. An error returned
// by next() has not been written yet when next() returns (the boundary
// writes it after the chain unwinds): use Resolve for the status it will
// produce.
func (c *Ctx) Status() int { return c.rc.Response.StatusCode() }

// ErrorCode returns the code of the error behind the response: set when
// the error boundary handles a failure (also when the error hook wrote the
// response itself, which may carry another status), by WriteError, and for
// the transport errors and the over-capacity 503 that OnResponse observes.
// It is "" while the request has not failed, and for a success. Final
// inside OnResponse.
func (c *Ctx) ErrorCode() string { return c.out.code }

// WriteError writes the default envelope for err into the response, as
// the error boundary would: the status and code Resolve gives, the
// message and details (production rules apply: FX_INTERNAL_ERROR says only
// "Internal server error" unless Config.Development), Content-Type
// application/json, any body written before and its Content-Encoding
// replaced, other headers kept. A *PanicError is treated as its panic
// value, and a value that is not an error (the raw value an error hook
// receives for panic("...")) gives the 500 FX_INTERNAL_ERROR, as it does
// at the boundary. It sets ErrorCode.
//
// Use it in an error hook to decorate the default response and return
// true, or in a middleware that handles an error itself and returns nil.
// It does not log: the boundary logs the 5xx failures it sees, and an
// error a middleware swallows never reaches it. Cost: that of the envelope
// (no allocation for an *Error without details).
func (c *Ctx) WriteError(err any) {
	e, _ := err.(error)
	raw := err
	if pe, ok := e.(*PanicError); ok {
		raw = pe.Value
	}
	status, code, msg, details := c.app.resolve(e, raw)
	c.out.code = code
	c.app.writeEnvelope(&c.rc.Response, status, code, msg, details)
}
