package fx

import "fmt"

// The middleware chain of a route is rt.chain followed by rt.handler.
// rt.chain is the App's middleware (in Use order), then its Group's
// (outermost group first), then the route's own Route.Middleware; it is
// built once at Boot (buildRouter). rt.handler is the route's handler,
// wrapped in its contract (body and query validation) when it has one, so
// every middleware, route middleware included, runs before validation
// (SPEC rule 18). Level i < len(chain) runs chain[i] with c.next; level
// len(chain) runs the handler (see runLevel in boundary.go, which also
// recovers panics). This is fx's only chain: App, Group and route
// middleware all go through it, so the guard below exists once.
//
// The next() guard is a single counter per request: c.started is the
// highest level begun. A middleware at level d calling next finds
// started > d exactly when it already called next once, because levels are
// begun strictly in order. The guard costs one comparison and no
// allocation; c.next is bound once per pooled Ctx.

// callNext is the Next given to every middleware.
func (c *Ctx) callNext() error {
	d := c.depth
	if c.started > d {
		return catalogError(ErrorCodes.NextCalledMultipleTimes,
			"next() was called more than once by the same middleware")
	}
	c.started = d + 1
	c.depth = d + 1
	err := c.runLevel(d + 1)
	c.depth = d
	return err
}

// nilMiddleware reports each nil entry of mws, which would otherwise panic
// on every request that reaches it, as a configuration error for Boot
// (FX_INTERNAL_ERROR naming owner and the position). It is the one check
// for App.Use, Group and Route.Middleware.
func nilMiddleware(owner string, mws []Middleware) []error {
	var errs []error
	for i, mw := range mws {
		if mw == nil {
			errs = append(errs, catalogError(ErrorCodes.InternalError,
				fmt.Sprintf("%s was given a nil middleware (position %d)", owner, i)))
		}
	}
	return errs
}
