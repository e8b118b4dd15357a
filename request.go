package fx

import (
	"context"
	"log/slog"
	"runtime/debug"

	"github.com/valyala/fasthttp"
)

// This file is the request path, in the order it happens: dispatch finds
// what answers a request (the static table, the one-path step, the
// router), serve runs a route's chain and the error boundary, and every
// request, whichever way it ended, leaves through finish. The requests
// that no route serves are answered here too, without a Ctx: the 404
// (notFound) and a refused path (refusePath).

// dispatch returns the App's request handler (Boot installs it): static
// (router.go) in front, then the one-path step (path.go), then route, the
// router's handler. A path static holds is one the step passes unchanged,
// so its route runs at once; a path the step refuses is answered by
// refusePath; a path whose first segment begins with a byte no route's
// does (static.heads, router.go) gets notFound, the router's NotFound,
// without the router's walk. The router calls serve for a route and for
// the automatic OPTIONS answer, notFound for a miss; what it answers
// itself (a redirect, with Config.RedirectTrailingSlash or
// RedirectFixedPath) is finished here.
//
// The request's clock starts here, when OnResponse observers will read
// it (RequestCtx.Time, lazy: see Ctx.Duration).
func (a *App) dispatch(static *staticRoutes, route, notFound fasthttp.RequestHandler) fasthttp.RequestHandler {
	redirects := a.cfg.RedirectTrailingSlash || a.cfg.RedirectFixedPath
	return func(rc *fasthttp.RequestCtx) {
		a.startClock(rc)
		u := rc.URI()
		orig := u.PathOriginal()
		if rt := static.lookup(rc.Method(), orig); rt != nil {
			a.serve(rc, rt)
			return
		}
		if !plainPath(orig, u.Path()) {
			if !routeNormalised(u) {
				a.refusePath(rc)
				return
			}
			orig = u.PathOriginal()
		}
		if static.heads.miss(orig) {
			notFound(rc) // what the router would answer, without its walk
			return
		}
		route(rc)
		if redirects {
			// The router may have redirected, calling none of ours: finish
			// it. A request serve or notFound finished is finished once
			// more: observers see a request once (the mark, observe.go),
			// closing and compressing an answer twice changes nothing.
			a.finish(rc, nil, unserved, "")
		}
	}
}

// serve runs one request through a route's chain and the boundary.
func (a *App) serve(rc *fasthttp.RequestCtx, rt *route) {
	c := a.acquireCtx(rc, rt)
	if err := c.runLevel(0); err != nil {
		a.handleError(c, err)
	}
	a.finish(rc, c, served, "")
}

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
	a.finish(rc, nil, unserved, codeNotFound)
}

var (
	notFoundPrefix = []byte(`{"error":{"code":"FX_NOT_FOUND","message":"Route `)
	notFoundSuffix = []byte(` not found"}}`)
)

// notFoundHandler is the handler of the not-found route (used when there is
// middleware or a hook).
func notFoundHandler(c *Ctx) error {
	return catalogError(codeNotFound,
		"Route "+c.Method()+" "+string(c.rc.URI().PathOriginal())+" not found")
}

// refusePath answers a path the one-path step refused (path.go) with the
// 400 envelope, as a transport error is answered: no middleware runs (a
// refused request is not one an application's middleware should see, log
// under a path it did not have, or let through to anything), nor the
// error hook. The OnResponse observers see it, with c.Path() the path as
// sent, escapes included (the access log shows /a/..%2f..%2fpublic, not
// /public), and Route "". Cost: the envelope, written without a Ctx (no
// allocation without observers).
func (a *App) refusePath(rc *fasthttp.RequestCtx) {
	status, _ := statusOf(codeBadRequest)
	a.writeEnvelope(&rc.Response, status, codeBadRequest, badPathMessage, nil)
	a.finish(rc, nil, refusedPath, codeBadRequest)
}

// badPathMessage is the message of refusePath's envelope.
const badPathMessage = "The request path holds an encoded '/', a '\\' or a double-encoded escape"

// startClock starts rc's clock (RequestCtx.Time, lazy under the App's
// server) when OnResponse observers will read it.
func (a *App) startClock(rc *fasthttp.RequestCtx) {
	if a.observers != nil {
		_ = rc.Time() // the first call reads the clock; later calls return it
	}
}

// acquireCtx takes a Ctx from the pool for rc and rt (Ctx.release gives
// it back).
func (a *App) acquireCtx(rc *fasthttp.RequestCtx, rt *route) *Ctx {
	c := a.ctxPool.Get().(*Ctx)
	c.rc, c.rt = rc, rt
	return c
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
			return catalogError(codeNextCalledMultipleTimes,
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
