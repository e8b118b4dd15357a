package fx

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fxhq/fx/internal/conn"
	"github.com/fxhq/fx/internal/ilist"
)

// Lifecycle: the App's one shutdown (Shutdown, ShutdownWithContext), the
// state that says it has begun, and the wait for it to complete.
//
// Listen and Serve return only after a shutdown has completed.
// fasthttp's Serve returns as soon as Shutdown closes the listener, while
// requests are still in flight and before the OnShutdown functions ran. A
// main that returned from Serve then (the common
// `log.Fatal(app.Listen(addr))` next to a signal handler calling Shutdown)
// exited mid-request: responses were cut off and pools were never closed. So
// the App tracks its listeners and its one shutdown here, and Serve, once
// its listener is closed by a shutdown, waits for that shutdown to complete
// and returns its result.
//
// Whether the shutdown has begun is one state, stopState, which Shutdown
// begins in one step and everything reads: finish (Connection: close on
// every response), App.Done and every Ctx.Context (its context), the
// boundary's log level for a shutdown's 503, a detached request's 101, a
// HandOff's refusal, and Serve and the in-memory exchanges here.
//
// Cost: one mutex lock when Serve starts and one when it returns, and one
// extra method call per accepted connection (serveListener.Close is the only
// method it adds); per request, one atomic load (finish), and for one that
// asks for its context, an uncontended lock when the context is made and
// one when the request ends (stopState.track, untrack).

// Shutdown stops accepting connections, waits for in-flight requests to
// finish (without a deadline; see ShutdownWithContext), then runs the
// OnShutdown functions. From Shutdown on, Ctx.Context of running handlers
// is done, responses carry Connection: close, and new connections are
// refused by the closed listener. Idle keep-alive connections are closed
// at once; a connection that never sent a request counts as idle 5s after
// it was accepted (as in net/http), unless ReadTimeout ends it first.
// Listen and Serve return when Shutdown does, with its result.
//
// An App shuts down once: a second call (concurrent or later) does not
// run the OnShutdown functions again; it waits for the first shutdown to
// finish and returns the first's result. Do not call Shutdown from a
// handler without a goroutine (it waits for that handler), and do not
// wait for Serve to return inside an OnShutdown function (Serve waits for
// it).
func (a *App) Shutdown() error {
	return a.ShutdownWithContext(context.Background())
}

// ShutdownWithContext is Shutdown bounded by ctx: when ctx ends first, it
// stops waiting, runs the OnShutdown functions and returns ctx's error
// (context.Cause(ctx), joined with theirs). A connection whose request is
// still running is not cut off: its response is sent with Connection:
// close, and the connection is then closed (unless the process exits
// first, which is what the bound is for). A request whose head has been
// read is in flight too: its body is read to the end and it is answered.
// When ctx has a deadline, a request still being read a quarter of the
// time left before it (at most one second before it) is answered 408
// FX_REQUEST_TIMEOUT with Connection: close, so that its client gets an
// answer within the bound instead of a connection closed at its end (a
// body that stopped short of its Content-Length, an upload too slow for
// the bound). A second call waits, within its own ctx, for the first
// shutdown to finish and returns the first's result.
func (a *App) ShutdownWithContext(ctx context.Context) error {
	first, lns, done := a.life.begin()
	if !first {
		select {
		case <-done:
			return a.life.result()
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	for _, ln := range lns {
		ln.Close() // also those fasthttp has not registered yet (see serveListener)
	}
	if d, ok := ctx.Deadline(); ok {
		// A request still being read by then is answered 408 within the
		// bound rather than left unanswered at its end (internal/conn).
		cut := d.Add(-min(time.Until(d)/4, readCutReserve))
		for _, ln := range lns {
			conn.EndReadsBy(ln, cut)
		}
	}
	a.srvMu.Lock()
	srv := a.server
	a.srvMu.Unlock()
	var errs []error
	// fasthttp's shutdown counts each Serve still in its accept loop as an
	// open connection, and checks the count every 100 ms: an idle App's
	// shutdown took a whole tick, since the loops had not yet seen their
	// closed listeners at the first check. Waiting for them here first
	// (microseconds) lets that check find only the real connections.
	for _, ln := range lns {
		select {
		case <-ln.acceptEnded:
		case <-ctx.Done():
		}
	}
	// In-memory exchanges (App.Test, TestRaw) are not connections of a
	// served listener: wait for them on the lifecycle's channel. They used
	// to run on fasthttp's Serve over an in-memory listener, whose shutdown
	// polls its open count every 100 ms and always found that Serve
	// goroutine still counted: every test's Shutdown took ~100 ms.
	ctxEnded := a.life.waitExchanges(ctx) != nil
	if srv != nil {
		if err := srv.ShutdownWithContext(ctx); err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				ctxEnded = true
			} else {
				errs = append(errs, err)
			}
		}
	}
	// Connections closed after the listener was: each ends cleanly for
	// its client (internal/conn, drain.go) within about a round trip.
	for _, ln := range lns {
		if conn.WaitDrained(ctx, ln) != nil {
			ctxEnded = true
		}
	}
	if ctxEnded {
		errs = append(errs, context.Cause(ctx)) // e.g. Run's "grace period exceeded"
	}
	a.regMu.Lock()
	closers := a.closers
	a.closers = nil
	a.regMu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		if err := closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	err := errors.Join(errs...)
	a.life.finish(err)
	return err
}

// readCutReserve is the most time a bounded shutdown keeps, before its
// deadline, for answering the requests still being read (see
// ShutdownWithContext) and for their connections' draining close.
const readCutReserve = time.Second

// The phases of a stopState, in the only order it moves through them.
const (
	phaseServing  uint32 = iota // no shutdown has begun
	phaseDraining               // requests see a shutdown; listeners and in-memory exchanges are still served (fxtest's Client.BeginShutdown stops here)
	phaseClosed                 // Shutdown has begun: nothing new is served either
)

// stopState is whether the App's shutdown has begun. begin is its one
// writer: it moves the phase forward, cancels the context whose Done
// channel is App.Done and ends every request context in flight, so that
// whoever reads the phase as begun finds App.Done closed and handlers'
// contexts done as well. New initialises it (init).
//
// Request contexts (Ctx.Context) are not children of ctx. A child context
// registers with its parent, under the parent's one mutex and in its one
// map, when it is made and again when it ends: twice per request on the
// same lock for every core's requests. Instead each Ctx belongs to one of
// ctxShards lists (spread at creation), and a request context is linked
// into its Ctx's list while it lives (track, untrack; an intrusive list,
// internal/ilist): an uncontended lock and a few pointer writes each way,
// no allocation; begin walks the lists.
type stopState struct {
	phase  atomic.Uint32 // phaseServing, phaseDraining, phaseClosed; only grows
	ctx    context.Context
	cancel context.CancelFunc

	shards    [ctxShards]ctxShard
	nextShard atomic.Uint32 // spreads new Ctxs over shards
}

// ctxShards is the number of lists request contexts are kept in: enough
// that requests on different cores rarely take the same lock.
const ctxShards = 16

// ctxShard is a list of the Ctxs whose request context is alive
// (Ctx.stopNode), padded to its own cache line.
type ctxShard struct {
	mu   sync.Mutex
	ctxs ilist.List[*Ctx]
	_    [48]byte
}

// shard picks the list of a new Ctx.
func (s *stopState) shard() *ctxShard {
	return &s.shards[s.nextShard.Add(1)%ctxShards]
}

// track makes c's request context, whose cancel is cancel, end when the
// shutdown begins: at once if it has begun, else when begin walks c's list.
// untrack undoes it before the request ends.
func (s *stopState) track(c *Ctx, cancel context.CancelFunc) {
	sh := c.stopShard
	sh.mu.Lock()
	if s.begun() { // checked under the lock begin walks the list with
		sh.mu.Unlock()
		cancel()
		return
	}
	c.stopCancel = cancel
	sh.ctxs.Push(&c.stopNode)
	sh.mu.Unlock()
}

// untrack removes c from its list; nothing when it is not in it.
func (s *stopState) untrack(c *Ctx) {
	if !c.stopNode.Listed() { // only c's own goroutine changes it
		return
	}
	sh := c.stopShard
	sh.mu.Lock()
	sh.ctxs.Remove(&c.stopNode)
	c.stopCancel = nil
	sh.mu.Unlock()
}

// cancelTracked ends every request context in the lists.
func (s *stopState) cancelTracked() {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.ctxs.Each(func(c *Ctx) { c.stopCancel() })
		sh.mu.Unlock()
	}
}

func (s *stopState) init() { s.ctx, s.cancel = context.WithCancel(context.Background()) }

// begin moves the state to p (phaseDraining or phaseClosed) unless it is
// there or past it, and reports whether this call moved it: of concurrent
// Shutdowns, exactly one gets true for phaseClosed.
func (s *stopState) begin(p uint32) bool {
	for {
		old := s.phase.Load()
		if old >= p {
			return false
		}
		if s.phase.CompareAndSwap(old, p) {
			// After the phase: a handler whose context is done sees begun.
			s.cancel()
			s.cancelTracked()
			return true
		}
	}
}

// begun reports whether the shutdown has begun (in memory or for real).
// Cost: one atomic load; finish calls it per request.
func (s *stopState) begun() bool { return s.phase.Load() != phaseServing }

// closed reports whether Shutdown has begun: no new listener or in-memory
// exchange is served. lifecycle reads it with its mutex held, which
// lifecycle.begin holds to close it.
func (s *stopState) closed() bool { return s.phase.Load() == phaseClosed }

// context is done once begun; its Done channel is App.Done.
func (s *stopState) context() context.Context { return s.ctx }

// lifecycle is the App's shutdown: the stopping state, the listeners
// served and the result. Ready once New has initialised stop: no shutdown
// yet, no listener served.
type lifecycle struct {
	mu   sync.Mutex
	stop stopState                   // closed under mu: Serve serves no new listener
	lns  map[*serveListener]struct{} // listeners Serve is serving, closed by the shutdown
	done chan struct{}               // closed when the first shutdown has finished
	err  error                       // that shutdown's result, set before done is closed

	// In-memory exchanges (App.Test, TestRaw; apptest.go) being served.
	// fasthttp's Server.ShutdownWithContext cannot wait for them without
	// its 100 ms polling tick (it returns at once when the App never served
	// a listener), so the shutdown waits for them here, on a channel:
	// exchangesIdle is closed when a shutdown has begun and none is left.
	exchanges     int
	exchangesIdle chan struct{}
}

// addExchange records an in-memory exchange about to be served. It
// reports false, recording nothing, when a shutdown has begun: the
// exchange must then not be served (as a closed listener refuses).
func (l *lifecycle) addExchange() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop.closed() {
		return false
	}
	l.exchanges++
	return true
}

// doneExchange forgets an exchange recorded by addExchange, which has
// been served.
func (l *lifecycle) doneExchange() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.exchanges--
	if l.stop.closed() && l.exchanges == 0 && l.exchangesIdle != nil {
		close(l.exchangesIdle)
		l.exchangesIdle = nil
	}
}

// waitExchanges waits, within ctx, until no exchange is being served. The
// shutdown must have begun (no new exchange can start). It returns ctx's
// error when ctx ended first.
func (l *lifecycle) waitExchanges(ctx context.Context) error {
	l.mu.Lock()
	if l.exchanges == 0 {
		l.mu.Unlock()
		return nil
	}
	if l.exchangesIdle == nil {
		l.exchangesIdle = make(chan struct{})
	}
	idle := l.exchangesIdle
	l.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// doneLocked returns the channel closed at the end of the shutdown.
// l.mu must be held.
func (l *lifecycle) doneLocked() chan struct{} {
	if l.done == nil {
		l.done = make(chan struct{})
	}
	return l.done
}

// add records ln as served. It reports false, recording nothing, when a
// shutdown has begun: the caller must not serve ln then.
func (l *lifecycle) add(ln *serveListener) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop.closed() {
		return false
	}
	if l.lns == nil {
		l.lns = make(map[*serveListener]struct{})
	}
	l.lns[ln] = struct{}{}
	return true
}

// remove forgets ln, whose Serve has ended, and reports whether a shutdown
// has begun (then Serve ended because of it).
func (l *lifecycle) remove(ln *serveListener) (shuttingDown bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.lns, ln)
	return l.stop.closed()
}

// begin starts the shutdown: from its return on, every response closes
// its connection, every Ctx.Context and App.Done are done, and no new
// listener or exchange is served (stopState.begin). The first caller gets
// first == true and the listeners being served, which it must close;
// later callers get the channel that is closed when the first caller's
// shutdown has finished.
func (l *lifecycle) begin() (first bool, lns []*serveListener, done <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	done = l.doneLocked()
	if !l.stop.begin(phaseClosed) {
		return false, nil, done
	}
	for ln := range l.lns {
		lns = append(lns, ln)
	}
	return true, lns, done
}

// finish records the shutdown's result and releases everyone waiting.
func (l *lifecycle) finish(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err = err
	close(l.doneLocked())
}

// wait blocks until the shutdown (which must have begun) has finished and
// returns its result.
func (l *lifecycle) wait() error {
	l.mu.Lock()
	done := l.doneLocked()
	l.mu.Unlock()
	<-done
	return l.result()
}

// result is the finished shutdown's result.
func (l *lifecycle) result() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// serveListener is the listener Serve hands to fasthttp. Its Close is
// idempotent: Shutdown closes it itself (fasthttp only closes the
// listeners its Serve has already registered, so a Serve racing with
// Shutdown would otherwise block in Accept forever), and fasthttp's second
// Close must not turn into a "use of closed network connection" error
// returned by Shutdown.
//
// acceptEnded is closed when fasthttp's Serve on the listener has returned:
// the shutdown waits for it (see ShutdownWithContext).
type serveListener struct {
	net.Listener
	once        sync.Once
	err         error
	acceptEnded chan struct{}
}

func (l *serveListener) Close() error {
	l.once.Do(func() { l.err = l.Listener.Close() })
	return l.err
}

// Unwrap returns the listener l serves, for conn.WaitDrained.
func (l *serveListener) Unwrap() net.Listener { return l.Listener }
