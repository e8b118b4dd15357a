package fx

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/fxhq/fx/internal/conn"
	"github.com/valyala/fasthttp"
)

// Observation: App.OnResponse registers functions that see every
// request's final status, error code, route pattern and duration after
// the response is final, whichever way it ended. Every request fx answers
// through a RequestCtx leaves through one step, App.finish (request.go),
// which calls observeEnd here: a route, the automatic OPTIONS answer and
// ServeError with the request's own Ctx; the 404 written without a Ctx,
// a path refused by the one-path step, a router redirect, a failed boot's
// 500 and the transport errors with a Ctx of their own. The one exception
// is the over-capacity 503, written on a refused connection before any
// request exists (by the connection layer, internal/conn): it is observed
// by observeRefusal, below.
//
// Cost model: nothing when no observer is registered (finish tests one
// slice). With observers, a request pays one request user value (the mark
// that makes every path observe a request once), one deferred recover per
// observer, what the observers do, and on a served connection one clock
// read for the start (fasthttp's lazy request time, see Ctx.Duration); the
// end is read only when an observer asks for Duration, once per request.
// BenchmarkOnResponse* give the numbers; they run without a server, so
// they leave out the start's clock read.

// OnResponse registers fn to run once per request after the response is
// final: after the handler, the middleware, the error boundary and the
// error hook (404s, validation failures, panics, hook-written responses,
// redirects), and also for the transport errors (400, 408, 413, 431) and
// the over-capacity 503 that never reach a handler. Observers run in
// registration order, on the request's goroutine, before fasthttp writes
// the response to the connection, and before the Ctx is released, so
// every Ctx accessor works; they must treat the response as read-only and
// must not keep c. Like handlers, they run concurrently for concurrent
// requests. Inside fn, c.Status(), c.ErrorCode(), c.Route() and
// c.Duration() are final.
//
// A panicking observer is recovered and logged at error level (with the
// request's log attributes); the response and the later observers are
// unaffected.
//
// What the requests that never reached a route carry: a transport error is
// observed with the request as far as fasthttp parsed it (a head that
// could not be parsed shows fasthttp's defaults, GET and path "/"; a
// request refused for its framing (internal/conn) shows its method and path
// "/", its target having been replaced), Route "" and Duration 0 (fasthttp
// does not record when its reading began). A path refused before routing
// (an encoded '/', a '\', a double escape: see Ctx.Path) is observed with
// Route "" and c.Path() the path as sent, escapes included. The
// over-capacity 503 is observed with a Ctx of its own whose request is the
// head the client sent (method, path, headers; not the body) and whose
// remote address is the connection's; Route is "", Duration runs from the
// start of reading that head, and the response is the 503 envelope that
// was written. A connection closed without a response (it sent nothing
// before the read timeout) is not observed. Under the nethttp adapter, a
// request whose response could not be written is observed once, with
// the response fx produced (not the replacement envelope).
//
// Cost: nothing and no allocation without observers. With one observer
// that reads Status, Route and ErrorCode, no allocation and about 15 ns
// per request on a route, 20 ns on the 404 (BenchmarkOnResponse/One*
// against BenchmarkOnResponse/None*, -cpu 1, best of 30 interleaved
// rounds on a shared 2-core virtual machine: 72 against 86 ns on a
// route; in instructions, which load does not move, about 270 more per
// request on a route and 480 on the 404); reading Duration adds one
// time.Now (about 70 ns on that kvm-clock machine, 20-40 ns with a TSC
// clock source). Measure with go test -run '^$' -bench 'OnResponse'
// -benchmem . Register before Boot, like routes.
func (a *App) OnResponse(fn func(c *Ctx)) {
	if fn == nil {
		panic("fx: OnResponse given a nil function")
	}
	a.register("OnResponse", func() { a.observers = append(a.observers, fn) })
}

// observe marks c's outcome final and runs every observer on it.
func (a *App) observe(c *Ctx) {
	c.out.final = true
	for _, fn := range a.observers {
		a.runObserver(c, fn)
	}
}

// runObserver runs fn on c, recovering and logging a panic.
func (a *App) runObserver(c *Ctx, fn func(*Ctx)) {
	defer func() {
		if r := recover(); r != nil {
			a.logObserverPanic(c, r)
		}
	}()
	fn(c)
}

func (a *App) logObserverPanic(c *Ctx, r any) {
	defer func() { _ = recover() }() // the logger itself may be what panicked
	a.logger.LogAttrs(context.Background(), slog.LevelError, "fx: OnResponse observer panicked",
		c.withLogAttrs(slog.String("method", c.Method()), slog.String("path", c.Path()),
			slog.Any("panic", loggable(r)))...)
}

// observeEnd runs the observers on c, whose request just ended (see
// App.finish): the request's own Ctx (how is served), or a Ctx of its own
// for a response written without one, which shows Route "", code as its
// ErrorCode, and what how says.
func (a *App) observeEnd(c *Ctx, how ending, code string) {
	if how != served {
		c.out.code = code
		c.out.rawPath = how == refusedPath
	}
	if how != transport { // transport: Duration 0
		c.out.start = c.rc.Time() // started by startClock, or now
	}
	a.observe(c)
}

// observeAlone runs the observers on rc's response, which was written
// without a Ctx, with a Ctx of its own (Route ""), code as ErrorCode and
// start as the start.
func (a *App) observeAlone(rc *fasthttp.RequestCtx, code string, start time.Time) {
	c := a.acquireCtx(rc, nil)
	c.out.code = code
	c.out.start = start
	a.observe(c)
	c.release()
}

// The over-capacity 503 is written on a raw connection by the connection
// layer (internal/conn), on a goroutine that has no RequestCtx. Serve
// hands the layer observeRefusal as its refusal observer: the layer
// records the head the client sent while it reads it, and observeRefusal
// parses it into a pooled RequestCtx that also carries the 503 envelope,
// observed like any other response. Cost, paid only with observers
// registered: one pooled recorder (the layer's) and one pooled refusal
// (a RequestCtx, a 9 KiB reader) per refusal in flight, the head parse,
// and the observers; the refusals in flight are bounded by the layer's
// refusal budget.

// refusalObserver is the refusal observer Serve hands the connection
// layer: nil, so that heads are not even recorded, when no observer is
// registered.
func (a *App) refusalObserver() func(net.Conn, []byte, time.Time) {
	if a.observers == nil {
		return nil
	}
	return a.observeRefusal
}

// refusal is the pooled state of one observed refusal.
type refusal struct {
	rc fasthttp.RequestCtx
	rd bytes.Reader
	br *bufio.Reader
}

var refusalPool = sync.Pool{New: func() any {
	r := &refusal{}
	r.br = bufio.NewReaderSize(&r.rd, conn.MaxRefusalHead)
	return r
}}

// observeRefusal runs the observers on the 503 the connection layer wrote
// to c, refused for over-concurrency: the request is head (as far as it
// was sent), Route "", Duration from start.
func (a *App) observeRefusal(c net.Conn, head []byte, start time.Time) {
	r := refusalPool.Get().(*refusal)
	rc := &r.rc
	rc.Init2(c, fasthttpLogger{a}, false)
	r.rd.Reset(head)
	r.br.Reset(&r.rd)
	if rc.Request.Header.Read(r.br) != nil {
		rc.Request.Header.Reset() // a head cut short: observed without one
	}
	resp := &rc.Response
	resp.SetStatusCode(fasthttp.StatusServiceUnavailable)
	resp.Header.SetContentTypeBytes(contentTypeJSON)
	resp.Header.Set("Retry-After", "1")
	resp.SetConnectionClose()
	resp.SetBodyRaw(overloadBody)
	a.observeAlone(rc, codeServiceUnavailable, start)
	rc.Request.Reset()
	rc.Response.Reset()
	rc.Init2(nil, nil, false) // do not keep the connection reachable from the pool
	r.rd.Reset(nil)           // nor the layer's recorded head
	refusalPool.Put(r)
}
