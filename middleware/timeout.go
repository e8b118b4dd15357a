package middleware

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// Timeout returns middleware that gives the rest of the chain d to answer.
// It sets the deadline on the request's context (fx.Ctx.SetDeadline) and
// runs next in the same goroutine; when next returns after the deadline,
// or returns context.DeadlineExceeded because c.Context() expired, the
// request ends in 504 FX_TIMEOUT:
//
//	{"error":{"code":"FX_TIMEOUT","message":"The request was not handled in time"}}
//
// Use it on App.Use, a Group or a Route's Middleware; nested timeouts keep
// the earliest deadline (a Group's 1s and a route's 50ms give 50ms).
//
// Why no second goroutine: the timeout middleware of Fiber and Echo runs
// the handler in a goroutine and answers from another when the timer
// fires, so the late handler and the timeout response write the same
// response concurrently. That is a data race (gofiber/fiber#2364, and the
// "not ready for production" warning of #2507; labstack/echo#1761, #2126),
// and after the pooled context is reused for the next request it has sent
// one request's body in another's response (labstack/echo#2754). Here the
// handler and the 504 never overlap: the 504 is decided after next has
// returned, so nothing it wrote can be sent, and the Ctx is not reused
// while it runs.
//
// The price is that the deadline is cooperative: Go cannot stop a
// goroutine, so a handler that ignores c.Context() runs to completion and
// its client waits for it before getting the 504. Pass c.Context() to
// whatever may block (database drivers and net/http clients honour it);
// those calls return context.DeadlineExceeded at the deadline, and the
// handler returning that error (wrapped or not) is answered at once.
//
// What the late handler wrote is discarded: the body (a Stream included,
// never started), the status, and the headers that described that answer:
// Content-Type and Content-Encoding (the error boundary replaces them), and
// Content-Disposition, Content-Language, Content-Location, Content-Range,
// ETag, Last-Modified, Location, Cache-Control and Expires. Other headers
// (request IDs, CORS, Set-Cookie) are kept, as on every error response. An
// error the handler returned after the deadline is kept behind the 504 for
// the log and the error hook (errors.Is and errors.As find it); the client
// sees only the 504 envelope. The returned error also carries what the
// handler answered (a LateAnswer method, which package
// middleware/idempotency reads so that a retry gets the handler's answer
// rather than running it again).
//
// The deadline bounds the handler chain, not the sending of the response:
// a Stream's function runs after the chain and is bounded by
// Config.WriteTimeout. Timeout panics when d is not positive.
//
// Cost, measured in process over a bare route (BenchmarkTimeout* in this
// package; 2 shared cores, so about ±30%): a handler that never asks for
// its context pays two clock reads, about 100 ns and no allocation (the
// deadline is only recorded); one that calls c.Context() gets a
// context.WithDeadline (a runtime timer, no goroutine) instead of the
// context.WithCancel it would get anyway, about 0.6 µs and 2 allocations
// (176 B) more. An overrun allocates its error and a copy of the late
// answer. A nested Timeout adds another clock pair, and when the
// context already exists, a derived context (4 allocations).
func Timeout(d time.Duration) fx.Middleware {
	if d <= 0 {
		panic(fmt.Sprintf("middleware.Timeout: the duration must be positive, got %v", d))
	}
	return fx.Declare(func(c *fx.Ctx, next fx.Next) error {
		deadline := time.Now().Add(d)
		c.SetDeadline(deadline)
		err := next()
		if err != nil && isTimeout(err) {
			return err // an inner Timeout has answered
		}
		if time.Now().Before(deadline) && !expired(c, err) {
			return err
		}
		te := &timeoutError{cause: err}
		if resp := &c.RequestCtx().Response; err == nil && !resp.IsBodyStream() {
			te.late = new(fasthttp.Response)
			resp.CopyTo(te.late) // what the handler answered, for LateAnswer
		}
		discardAnswer(&c.RequestCtx().Response)
		return te
	}, fx.Declaration{Errors: []*fx.Error{errTimeout}})
}

// errTimeout is the 504, shared (an overrun wraps it in a timeoutError).
// Its message names no duration: with nested timeouts the deadline that
// fired may be another Timeout's (or the transport's), and a wrong figure
// would mislead whoever reads the response.
var errTimeout = fx.NewCatalogError(fx.ErrorCodes.Timeout, "The request was not handled in time")

// isTimeout reports whether err is a Timeout's answer.
func isTimeout(err error) bool {
	if err == error(errTimeout) {
		return true
	}
	_, ok := err.(*timeoutError)
	return ok
}

// expired reports whether err says that the request's context ran out:
// the deadline that fired may be an earlier one than this Timeout's (the
// transport's context), or the timer may fire a moment before the clock
// check agrees. A DeadlineExceeded of some other context (an http.Client's
// own Timeout) with the request's context still live is the handler's own
// error, passed on unchanged.
func expired(c *fx.Ctx, err error) bool {
	return err != nil && errors.Is(err, context.DeadlineExceeded) &&
		errors.Is(c.Context().Err(), context.DeadlineExceeded)
}

// discardHeaders describe the answer the late handler wrote; the boundary
// itself replaces Content-Type, Content-Encoding, the status and the body.
var discardHeaders = []string{
	fasthttp.HeaderContentDisposition, fasthttp.HeaderContentLanguage,
	fasthttp.HeaderContentLocation, fasthttp.HeaderContentRange,
	fasthttp.HeaderETag, fasthttp.HeaderLastModified, fasthttp.HeaderLocation,
	fasthttp.HeaderCacheControl, fasthttp.HeaderExpires,
}

// discardAnswer removes what the late handler wrote beyond what the error
// boundary replaces. ResetBody also closes a body stream, so a Stream
// function registered by the late handler never runs.
func discardAnswer(resp *fasthttp.Response) {
	resp.ResetBody()
	for _, h := range discardHeaders {
		resp.Header.Del(h)
	}
}

// timeoutError is the 504 with what the handler answered after its
// deadline: the client gets the 504 (the boundary finds the *fx.Error
// first), the log and the hook also see the cause.
type timeoutError struct {
	cause error              // the handler's error; nil when it answered
	late  *fasthttp.Response // a copy of the answer it wrote when cause is nil (not a stream)
}

func (e *timeoutError) Error() string {
	if e.cause == nil {
		return errTimeout.Error() + "; the handler then answered " + strconv.Itoa(e.late.StatusCode())
	}
	return errTimeout.Error() + "; the handler then returned: " + e.cause.Error()
}

func (e *timeoutError) Unwrap() []error {
	if e.cause == nil {
		return []error{errTimeout}
	}
	return []error{errTimeout, e.cause}
}

// LateAnswer is what the handler answered after its deadline, which the
// 504 replaced: the error it returned, or, when it returned nil, the
// response it wrote (nil for a Stream). The handler had returned when
// Timeout answered (it runs on the request's goroutine), so this is its
// final outcome: work it did is done. Middleware outside Timeout that must
// not redo that work on a retry reads it through errors.As with an
// interface of this method (package middleware/idempotency stores it for
// the retry). Unless the handler reported the deadline itself
// (context.DeadlineExceeded), the work it was asked for may be done.
func (e *timeoutError) LateAnswer() (*fasthttp.Response, error) { return e.late, e.cause }
