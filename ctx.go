package fx

import (
	"context"
	"log/slog"
	"time"

	"github.com/fxhq/fx/internal/ilist"
	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// Ctx is the per-request context handed to handlers and middleware.
//
// Lifetime: a Ctx is pooled. It is valid from the moment the first
// middleware (or the handler) is called until the handler chain returns;
// after that the framework reuses it for another request. Do not keep a
// *Ctx, or call its methods, from a goroutine that outlives the handler.
//
// Strings returned by Method, Path, Href, Param, Header, Query and Host are
// copies: they stay valid and unchanged after the request ends (fasthttp
// reuses its request buffers, so a zero-copy string would later show
// another request's bytes). Methods whose result aliases request memory say
// so in their names or doc (Body).
//
// Its methods, by concern: its lifecycle (Context and SetDeadline,
// request-scoped values, the outcome observers read: Status, ErrorCode,
// Route, Duration, and the log attributes); reading the request (method,
// path, parameters, query, headers, body, cookies, forms); writing the
// response (JSON, headers, cookies, redirects, the error envelope); the
// client's address behind trusted proxies; streaming (Stream, SSE).
type Ctx struct {
	rc  *fasthttp.RequestCtx
	app *App
	rt  *route

	// Chain state: depth is the level now running (0 = first middleware,
	// len(rt.chain) = handler); started is the highest level begun, which
	// is the whole of the next() guard.
	depth   int
	started int
	next    Next // c.callNext(), bound once per pooled Ctx: no allocation per request

	values []ctxValue
	cctx   context.Context
	cancel context.CancelFunc

	// The App's shutdown ends cctx through these (stopState.track, in
	// lifecycle.go): the list this Ctx belongs to, its place in it while
	// cctx is alive, and the cancel of cctx's root.
	stopShard  *ctxShard
	stopNode   ilist.Node[*Ctx]
	stopCancel context.CancelFunc

	// deadline is the earliest SetDeadline made before Context created
	// cctx, which then carries it (SetDeadline).
	deadline time.Time

	// body and query hold values produced by route-contract validation.
	body, query any

	jw  jsonWriter
	enc *json.Encoder

	// topPanic is the PanicError of a panic caught at level 0, reused so
	// that panics cost no allocation (see Ctx.recovered).
	topPanic PanicError

	// hdrSnap is where the boundary saves response headers before calling
	// the error hook, so a hook that declines can be undone.
	hdrSnap fasthttp.ResponseHeader

	// out is what observation reads: error code, clock, log attributes
	// (observe.go).
	out ctxOutcome
}

type ctxValue struct{ key, val any }

func newCtx(a *App) *Ctx {
	c := &Ctx{app: a, stopShard: a.life.stop.shard()}
	c.stopNode.Value = c
	c.next = c.callNext()
	c.resetEncoder()
	return c
}

func (c *Ctx) resetEncoder() {
	c.enc = json.NewEncoder(&c.jw)
	c.enc.SetEscapeHTML(false)
}

// release ends c's lifetime: c is emptied (reset) and goes back to its
// App's pool; it must not be used afterwards. The request path took it
// with App.acquireCtx (request.go).
func (c *Ctx) release() {
	c.reset()
	c.app.ctxPool.Put(c)
}

func (c *Ctx) reset() {
	c.deadline = time.Time{} // SetDeadline's, when Context was never called
	if c.cancel != nil {
		c.app.life.stop.untrack(c)
		c.cancel()
		c.cancel, c.cctx = nil, nil
	}
	clear(c.values)
	c.values = c.values[:0]
	c.rc, c.rt, c.body, c.query, c.jw.resp = nil, nil, nil, nil, nil
	c.depth, c.started = 0, 0
	c.topPanic = PanicError{}
	c.out.reset() // ErrorCode, clock, log attributes
}

// RequestCtx returns the underlying fasthttp request context, for anything
// fx does not wrap. It shares the Ctx's lifetime.
func (c *Ctx) RequestCtx() *fasthttp.RequestCtx { return c.rc }

// App returns the App serving this request.
func (c *Ctx) App() *App { return c.app }

// SetValue stores a request-scoped value under key, for later middleware
// and the handler (Value). Use a private key type, as with context.Context.
// Values are cleared when the request ends.
func (c *Ctx) SetValue(key, value any) {
	for i := range c.values {
		if c.values[i].key == key {
			c.values[i].val = value
			return
		}
	}
	c.values = append(c.values, ctxValue{key, value})
}

// Value returns the request-scoped value stored under key, or nil.
func (c *Ctx) Value(key any) any {
	for i := range c.values {
		if c.values[i].key == key {
			return c.values[i].val
		}
	}
	return nil
}

// Context returns a context.Context that is cancelled when the handler
// chain returns or the App shuts down (Shutdown); pass it to database calls
// and outgoing requests. It carries the values of the transport's context
// when one was supplied with SetRequestContext: under the nethttp adapter it
// is derived from the *http.Request's context, so it is also cancelled when
// the client goes away. On fasthttp it is not: fasthttp does not watch the
// connection while a handler runs, so bound long work with a timeout of
// your own.
//
// Cost: created on first use, one context.WithCancel (two small
// allocations, no goroutine) and an uncontended lock to link it where the
// App's shutdown finds it (and one to unlink it when the request ends): it
// is not registered with a context every request shares, so requests on
// different cores take no common lock for it. Free when never called.
func (c *Ctx) Context() context.Context {
	if c.cctx == nil {
		c.cctx, c.cancel = c.newContext() // with SetDeadline's deadline, if any
	}
	return c.cctx
}

// requestContextKey is the RequestCtx user-value key of SetRequestContext.
type requestContextKey struct{}

// SetRequestContext makes ctx the parent of Ctx.Context for the request
// served through rc. Transport adapters call it before running the App's
// handler (the nethttp adapter passes the *http.Request's context, so a
// client that disconnects cancels c.Context()). It costs one user value on rc.
func SetRequestContext(rc *fasthttp.RequestCtx, ctx context.Context) {
	rc.SetUserValue(requestContextKey{}, ctx)
}

// RequestContext returns the context set for rc with SetRequestContext, or
// nil when none was. Instrumentation that must replace the parent of
// Ctx.Context (a tracing middleware) reads it to keep the transport's
// cancellation. It costs one user-value lookup.
func RequestContext(rc *fasthttp.RequestCtx) context.Context {
	ctx, _ := rc.UserValue(requestContextKey{}).(context.Context)
	return ctx
}

// SetDeadline makes c.Context() end at t with context.DeadlineExceeded,
// unless it already ends earlier: nested deadlines (an App-wide one, a
// Group's, a route's) keep the earliest, so a later, longer one never
// extends a shorter one; the zero time sets none. The deadline lasts until the request ends
// (Context is cancelled then, as always); it is not carried to the next
// request served by the pooled Ctx.
//
// The deadline is cooperative: Go cannot stop a running goroutine, so a
// handler that never looks at c.Context() runs to completion. Database
// drivers, net/http clients and anything else that takes the context
// return context.DeadlineExceeded once it passes. middleware.Timeout is
// built on SetDeadline and turns an overrun into 504 FX_TIMEOUT.
//
// A context already handed out by c.Context() before SetDeadline keeps its
// own end: call SetDeadline first (middleware does, before next), then
// pass c.Context() on.
//
// Cost: before Context is first called, SetDeadline only records t (no
// allocation); Context then creates a context.WithDeadline instead of a
// context.WithCancel: a runtime timer (no goroutine), about 0.6 µs and 2
// allocations more (middleware's BenchmarkTimeoutContext). A deadline set
// after Context was called, and earlier than the current one, derives a
// further context: about 4 allocations. A later one costs nothing.
func (c *Ctx) SetDeadline(t time.Time) {
	if t.IsZero() {
		return // no deadline, as context.Context.Deadline reports it
	}
	if c.cctx == nil {
		// Context has not been called: keep the deadline for when it is.
		// A handler that never asks for its context costs no timer.
		if c.deadline.IsZero() || t.Before(c.deadline) {
			c.deadline = t
		}
		return
	}
	if d, ok := c.cctx.Deadline(); ok && !t.Before(d) {
		return // the earliest deadline wins
	}
	ctx, cancel := context.WithDeadline(c.cctx, t)
	// reset (ctx.go) calls c.cancel when the request ends. The outer
	// cancel must still run then, or the outer context's timer (and its
	// place in a transport context's children) outlives the request. The
	// derived one would end with it (cancellation propagates, stopping its
	// timer); its own cancel is called as well, as the context package
	// asks.
	outer := c.cancel
	c.cctx, c.cancel = ctx, func() { cancel(); outer() }
}

// newContext creates the request's context (Ctx.Context): a child of the
// transport's context (SetRequestContext) when there is one, else of
// context.Background(), with the deadline SetDeadline recorded, if any;
// the App's shutdown ends it (stopState.track, lifecycle.go).
func (c *Ctx) newContext() (context.Context, context.CancelFunc) {
	parent := RequestContext(c.rc)
	if parent == nil {
		parent = context.Background()
	}
	var ctx context.Context
	var cancel context.CancelFunc
	if c.deadline.IsZero() {
		ctx, cancel = context.WithCancel(parent)
	} else {
		ctx, cancel = context.WithDeadline(parent, c.deadline)
	}
	c.app.life.stop.track(c, cancel)
	return ctx, cancel
}

// The outcome: what the response is, read by middleware after next()
// and, final, by OnResponse observers (observe.go).

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

// ctxOutcome is the per-request observation state of a Ctx (reset with
// it): the error code, the clock and the log attributes (AddLogAttrs).
type ctxOutcome struct {
	code       string
	start, end time.Time // start zero: Duration 0; end: read on first use inside OnResponse
	final      bool      // the observers are running: the outcome is final
	attrs      []slog.Attr
	// hookPanicked tells hookDeclined (boundary.go) that the hook ended in
	// a panic, so nothing it wrote is kept.
	hookPanicked bool
	// rawPath makes c.Path() the path as sent: the request's path was
	// refused (refusePath), and its decoded form is not what was refused.
	rawPath bool
	// detached: the handler took the connection over (Ctx.Detach); finish
	// holds the Ctx until its end (ctx_detach.go).
	detached bool
}

func (o *ctxOutcome) reset() {
	o.code = ""
	o.start, o.end = time.Time{}, time.Time{}
	o.final, o.hookPanicked, o.rawPath, o.detached = false, false, false, false
	if cap(o.attrs) > maxKeptAttrs {
		o.attrs = nil // a request that added hundreds does not pin them in the pool
	} else {
		clear(o.attrs) // drop references for the GC
		o.attrs = o.attrs[:0]
	}
}

const maxKeptAttrs = 32

// Route returns the pattern of the matched route in fx syntax, as it was
// registered (with a Group's prefix): "/users/:id", "/files/*path". It is
// "" when no route matched: the 404, a refused path, the automatic OPTIONS
// answer, a redirect, and the transport errors and the 503 that
// OnResponse observes. No allocation.
func (c *Ctx) Route() string {
	if c.rt == nil {
		return ""
	}
	return c.rt.path
}

// Duration returns the time since fx began the request, from when the
// App's handler began routing it (its RequestCtx.Time: the App's server
// has LazyRequestTime, so the clock is read when routing begins, and only
// while observers are registered; reading the request is not included).
// Inside OnResponse it is final: the clock is read on the first call, and
// every later call, by any observer, returns the same value. It is 0 for a transport error (see OnResponse).
//
// Cost: two clock reads (time.Now, 20-40 ns each on hardware with a TSC
// clock source, about 55-230 ns on a kvm-clock virtual machine): the
// start, read for every request while observers are registered (none
// without), and the end, read inside OnResponse once per request and only
// when an observer asks. Outside OnResponse every call reads the clock.
func (c *Ctx) Duration() time.Duration {
	start := c.out.start
	if !c.out.final {
		if start.IsZero() {
			start = c.rc.Time()
		}
		return time.Since(start)
	}
	if start.IsZero() {
		return 0
	}
	if c.out.end.IsZero() {
		c.out.end = time.Now()
	}
	return c.out.end.Sub(start)
}

// Per-request log attributes: what a middleware adds with AddLogAttrs
// (the RequestID middleware adds request_id) goes onto every line fx
// writes about that request: the boundary's 5xx line, an error hook's or
// the boundary's own failure, an OnResponse observer's panic, and what
// observers such as middleware.AccessLog log with LogAttrs.

// AddLogAttrs adds attrs to the request's log attributes, which fx appends
// to every log line it writes for this request (see above) and which
// LogAttrs returns for logging of your own. They are cleared when the
// request ends. Cost: an append to a slice kept in the pooled Ctx, no
// allocation once the slice has grown (values that are strings, numbers,
// durations or times are stored without allocating, as in slog).
func (c *Ctx) AddLogAttrs(attrs ...slog.Attr) {
	c.out.attrs = append(c.out.attrs, attrs...)
}

// LogAttrs returns the request's log attributes, in the order they were
// added. The slice belongs to the Ctx: do not modify it, and do not keep
// it past the request (append it to a slice of your own, or pass it to
// slog.Logger.LogAttrs, which copies what it keeps).
func (c *Ctx) LogAttrs() []slog.Attr { return c.out.attrs }

// withLogAttrs returns attrs followed by the request's log attributes,
// for fx's own log lines.
func (c *Ctx) withLogAttrs(attrs ...slog.Attr) []slog.Attr {
	return append(attrs, c.out.attrs...)
}
