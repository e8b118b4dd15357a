// Package drainhook lets package fxtest put an App in memory into the
// state of a shutdown that has begun, without ending its in-memory
// exchanges. The root package sets Begin when it is initialised (fx
// imports this package; this package imports nothing of fx).
package drainhook

// Begin, given an *fx.App, begins its shutdown in memory: it moves the
// App's one stopping state to "draining", which everything that asks
// whether the shutdown has begun reads, so from its return on every
// response closes its connection and App.Done and every running
// handler's Ctx.Context are done, as after Shutdown. It closes no
// listener and refuses no in-memory exchange. Shutdown, called later,
// completes as usual.
var Begin func(app any)
