package fx

import (
	"sync"
	"unsafe"
)

// Declare records that mw can end a request with errs (their status and
// code), for documentation: the route table lists them (RouteInfo.Errors)
// and package openapi documents them on every operation mw guards. It
// returns mw itself, unchanged: declaring costs nothing per request.
//
// A middleware constructor declares what it raises once, when it builds
// the middleware:
//
//	func RequireAPIKey() fx.Middleware {
//		return fx.Declare(func(c *fx.Ctx, next fx.Next) error { ... }, ErrNoKey)
//	}
//
// Limits: the declaration is keyed by the function value's identity (the
// closure Go allocated), in a process-wide table that is only read by
// Declared, never while serving. A closure that captures variables is a
// new value per constructor call, so each call declares its own errors;
// a function without captures (a top-level func, a literal capturing
// nothing) is one value everywhere, and its declaration holds for every
// use. Wrapping mw in another function (func(c, n) error { return mw(c,
// n) }) loses the declaration: declare the wrapper. Entries are never
// removed (the table keeps mw alive, so its identity is never reused):
// declare at construction, not per request. Declaring the same mw again
// adds to its errors.
func Declare(mw Middleware, errs ...*Error) Middleware {
	if mw == nil {
		return nil
	}
	declMu.Lock()
	defer declMu.Unlock()
	k := funcKey(mw)
	d, _ := declared.Load(k)
	prev, _ := d.(*declaration)
	nd := &declaration{mw: mw}
	if prev != nil {
		nd.errs = append(nd.errs, prev.errs...)
	}
	for _, e := range errs {
		if e != nil {
			nd.errs = append(nd.errs, e)
		}
	}
	declared.Store(k, nd)
	return mw
}

// Declared returns the errors declared for mw with Declare (nil when
// none). The slice is a copy.
func Declared(mw Middleware) []*Error {
	if mw == nil {
		return nil
	}
	d, ok := declared.Load(funcKey(mw))
	if !ok {
		return nil
	}
	return append([]*Error(nil), d.(*declaration).errs...)
}

var (
	declMu   sync.Mutex // serialises Declare's read-modify-write
	declared sync.Map   // funcKey → *declaration
)

type declaration struct {
	mw   Middleware // kept alive so that its identity is never reused
	errs []*Error
}

// funcKey is the identity of a func value: the pointer to the closure
// record Go allocated for it (reflect's Pointer gives the code address,
// which every closure of one literal shares).
func funcKey(mw Middleware) uintptr {
	return *(*uintptr)(unsafe.Pointer(&mw))
}
