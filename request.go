package fx

import (
	"context"
	"log/slog"
	"runtime/debug"

	"github.com/valyala/fasthttp"
)

// This file is the request path: one request from the router to the
// response, in the order it happens. serve takes a pooled Ctx, runs the
// route's chain level by level (runLevel, callNext), hands a failure to the
// error boundary (boundary.go) and returns the Ctx to the pool.

// serve runs one request through a route's chain and the boundary.
func (a *App) serve(rc *fasthttp.RequestCtx, rt *route) {
	c := a.acquireCtx(rc, rt)
	a.startObserving(c) // OnResponse's clock (observe.go)
	if err := c.runLevel(0); err != nil {
		a.handleError(c, err)
	}
	a.finishObserving(c) // runs OnResponse observers (observe.go)
	a.releaseCtx(c)
	a.closeIfStopping(rc)
}

// acquireCtx takes a Ctx from the pool for rc and rt.
func (a *App) acquireCtx(rc *fasthttp.RequestCtx, rt *route) *Ctx {
	c := a.ctxPool.Get().(*Ctx)
	c.rc, c.rt = rc, rt
	return c
}

// releaseCtx returns c to the pool; c must not be used afterwards.
func (a *App) releaseCtx(c *Ctx) {
	c.reset()
	a.ctxPool.Put(c)
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

// The middleware chain of a route is rt.chain followed by rt.handler.
// rt.chain is the App's middleware (in Use order), then its Group's
// (outermost group first), then the route's own Route.Middleware; it is
// built once at Boot (buildRouter). rt.handler is the route's handler,
// wrapped in its contract (body and query validation) when it has one, so
// every middleware, route middleware included, runs before validation
// (an authorization check refuses before the body is read). Level
// i < len(chain) runs chain[i] with c.next; level len(chain) runs the
// handler (runLevel for level 0, callNext for the others; both recover
// panics). This is fx's only
// chain: App, Group and route middleware all go through it, so the guard
// below exists once.
//
// The next() guard is a single counter per request: c.started is the
// highest level begun. A middleware at level d calling next finds
// started > d exactly when it already called next once, because levels are
// begun strictly in order. The guard costs one comparison and no
// allocation; c.next is bound once per pooled Ctx.

// runLevel runs level 0 (the first middleware, or the handler of a route
// without middleware) and turns a panic into a *PanicError. Deeper levels
// are run by callNext, which has its own recover: see there.
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

// callNext returns the Next given to every middleware, bound once per
// pooled Ctx (a closure rather than a method value, whose wrapper would
// add a call frame per level). It runs the next level
// itself, with its own deferred recover, rather than through runLevel: the
// promise that a middleware's next() returns an inner panic as a
// *PanicError needs a recover in a frame between the middleware and the
// level below it, and callNext is that frame, so a level costs one call
// frame and one deferred recover (and a panic unwinds one frame less per
// level). A deeper panic is recovered by the innermost callNext on its way
// up, so each middleware sees the error its own next() returned; c.depth is
// restored in the deferred function, so it is right after a panic too.
func (c *Ctx) callNext() Next {
	return func() (err error) {
		d := c.depth
		if c.started > d {
			return catalogError(CodeNextCalledMultipleTimes,
				"next() was called more than once by the same middleware")
		}
		i := d + 1
		c.started, c.depth = i, i
		defer func() {
			c.depth = d
			if r := recover(); r != nil {
				err = c.recovered(i, r)
			}
		}()
		if i < len(c.rt.chain) {
			return c.rt.chain[i](c, c.next)
		}
		return c.rt.handler(c)
	}
}
