package fxotel

import (
	"context"
	"time"
)

// The server span's context must become the parent of c.Context() without
// taking away what c.Context() promises: cancellation at Shutdown, and
// under the nethttp adapter the *http.Request's context (cancelled when the
// client goes away). fx.SetRequestContext replaces the parent fx would
// otherwise use, so the middleware builds the same parent itself: the
// transport's context when an adapter set one, else appContext, which is
// done when App.Done is.

// appContext is a context.Context done when the App shuts down (App.Done):
// the parent fx gives c.Context() when no transport supplied one. It
// carries no values and no deadline.
type appContext struct{ done <-chan struct{} }

func (appContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (a appContext) Done() <-chan struct{}     { return a.done }
func (a appContext) Err() error {
	select {
	case <-a.done:
		return context.Canceled
	default:
		return nil
	}
}
func (appContext) Value(any) any { return nil }
