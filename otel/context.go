package fxotel

import (
	"context"
	"time"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// The server span's context must become the parent of c.Context() without
// taking away what c.Context() promises: cancellation at Shutdown, and
// under the nethttp adapter the *http.Request's context (cancelled when the
// client goes away). fx.SetRequestContext replaces the parent fx would
// otherwise use, so the middleware builds the same parent itself: the
// transport's context when an adapter set one, else appContext, which is
// done when App.Done is.

// transportContextKey is the request user-value key under which
// fx.SetRequestContext stores a transport's context. fx does not export
// it; it is learned once, from fx itself, by setting a context on a
// scratch RequestCtx and reading back the key it used, so the middleware
// finds an adapter's context with one user-value lookup.
var transportContextKey = func() any {
	var rc fasthttp.RequestCtx
	fx.SetRequestContext(&rc, context.Background())
	var key any
	rc.VisitUserValuesAll(func(k, _ any) { key = k })
	return key
}()

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
