package fx

// The middleware chain of a route is rt.chain (the app's middleware, in Use
// order) followed by rt.handler. Level i < len(chain) runs chain[i] with
// c.next; level len(chain) runs the handler (see runLevel in boundary.go,
// which also recovers panics).
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
