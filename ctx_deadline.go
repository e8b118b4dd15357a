package fx

import (
	"context"
	"time"
)

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
	// cancel must still run then, or the outer context stays registered
	// with its parent (the App's base context) for the App's life: a leak
	// per request. The derived one would end with it (cancellation
	// propagates, stopping its timer); its own cancel is called as well,
	// as the context package asks.
	outer := c.cancel
	c.cctx, c.cancel = ctx, func() { cancel(); outer() }
}

// newContext creates the request's context (Ctx.Context): a child of the
// transport's context (SetRequestContext) when there is one, or of the
// App's base context, which Shutdown cancels; with the deadline SetDeadline
// recorded, if any.
func (c *Ctx) newContext() (context.Context, context.CancelFunc) {
	parent := RequestContext(c.rc)
	if parent == nil {
		parent = c.app.baseCtx
	}
	if c.deadline.IsZero() {
		return context.WithCancel(parent)
	}
	return context.WithDeadline(parent, c.deadline)
}
