// Package handlerdecl holds the errors a handler built outside the core
// can answer by itself (package websocket's refusals before the
// upgrade), keyed by the handler's identity as fx.Declare keys a
// middleware's. The route table (fx.RouteInfo.Errors) adds them to those
// of every route that serves the handler, whatever the route's own
// Errors and Middleware say, so a user's declarations add to them and
// never replace them.
package handlerdecl

import (
	"sync"
	"unsafe"
)

var table sync.Map // the handler's closure address → entry

type entry struct {
	h    any // kept alive so that its identity is never reused
	errs any // a []*fx.Error
}

// Declare records errs, a []*fx.Error, for the handler h (a func value).
// Declare once, when the handler is built: entries are never removed.
func Declare(h, errs any) {
	table.Store(Key(h), entry{h: h, errs: errs})
}

// Errors returns what was declared for h (a []*fx.Error), or nil.
func Errors(h any) any {
	if h == nil {
		return nil
	}
	e, ok := table.Load(Key(h))
	if !ok {
		return nil
	}
	return e.(entry).errs
}

// Key is the identity of the func value in h: the address of the
// closure record Go allocated for it, which an interface holding a func
// value keeps as its data word (reflect's Pointer gives the code address,
// which every closure of one literal shares). It is the one identity of
// fx's declaration tables: this package's handlers and fx.Declare's
// middleware.
func Key(h any) uintptr {
	return uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&h))[1])
}
