package fx

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/fxhq/fx/internal/conn"
	"github.com/valyala/fasthttp"
)

// Serving HTTP over fasthttp is this file's one job: Listen and Serve
// put a listener under the connection layer (internal/conn, with the
// prebuilt 503 beyond Config.Concurrency) and the fasthttp.Server built
// from Config (Server), and transportError answers what fasthttp could
// not hand to a handler. Where the listening sockets come from is
// listen.go; the shutdown, and Serve's wait for it, lifecycle.go; Run's
// signals and grace period, run.go.

// Listen boots the App and serves HTTP on addr (":8080", "127.0.0.1:0")
// until Shutdown, and returns only after that shutdown has completed (see
// Serve for what it returns). It refuses to start, returning the boot
// error, when Boot fails, and returns net.Listen's error when addr cannot
// be listened on. To serve until SIGINT/SIGTERM and drain within a grace
// period, use Run.
//
// Where the listening sockets come from: sockets a hand-off passed for
// addr (see HandOff), else the sockets of socket activation (see
// ActivatedListeners; all of them, whatever addr says), else net.Listen.
// Either way they can be handed on by HandOff.
func (a *App) Listen(addr string) error {
	if err := a.Boot(); err != nil {
		return err
	}
	lns, err := a.listen(addr)
	if err != nil {
		return err
	}
	return a.serveAll(lns)
}

// serveAll serves every listener of lns with Serve, the first here and
// the others on goroutines, and returns what the first returned: Serve's
// rules make every one of them return the same shutdown's result.
func (a *App) serveAll(lns []net.Listener) error {
	for _, ln := range lns[1:] {
		go a.Serve(ln)
	}
	return a.Serve(lns[0])
}

// Serve boots the App and serves HTTP on ln until Shutdown. It returns
// only after the shutdown has completed: the requests in flight answered
// (or ShutdownWithContext's bound reached) and the OnShutdown functions
// run, so a main that returns or exits when Serve returns cuts nothing off.
// fasthttp's own Serve returns as soon as Shutdown begins; Serve waits for
// the rest.
//
// It returns what Shutdown (or ShutdownWithContext) returned: nil after a
// clean shutdown; the shutdown's error when it was not clean (ctx ended
// with requests still in flight, an OnShutdown function failed), so that
// `log.Fatal(app.Listen(addr))` reports an unclean shutdown. Serve called
// after a shutdown has begun serves nothing: it closes ln, waits for that
// shutdown and returns its result.
//
// When serving fails on its own (ln's Accept returns a permanent error,
// or ln is closed by someone else), Serve returns that error (nil for a
// closed ln) at once, without waiting for a Shutdown nobody may call: the
// App is not shut down (it may be serving other listeners; call Shutdown,
// or use Run, which shuts down in that case). Like Listen, Serve refuses
// to start when Boot fails. ln is closed when Serve returns.
//
// In the new process of a hand-off, Serve is where the process reports
// ready to the old one (see HandOff), once Run or Listen has taken every
// socket passed to it.
func (a *App) Serve(ln net.Listener) error {
	if err := a.Boot(); err != nil {
		ln.Close()
		return err
	}
	srv := a.Server()
	sl := &serveListener{Listener: a.connListener(a.tlsListener(ln)), acceptEnded: make(chan struct{})}
	if !a.life.add(sl) {
		sl.Close()
		return a.life.wait()
	}
	reportReady() // the new process of a hand-off is ready once it serves (handoff.go)
	err := srv.Serve(sl)
	close(sl.acceptEnded)
	sl.Close() // fasthttp leaves a listener that failed open
	if a.life.remove(sl) {
		return a.life.wait() // the listener was closed by the shutdown
	}
	return err
}

// connListener wraps ln in the connection layer (internal/conn): at most
// Config.Concurrency connections open at once, the one beyond answered
// with the prebuilt 503 FX_SERVICE_UNAVAILABLE (refuseOverload) and seen
// by the OnResponse observers (observeRefusal, observe.go); Config's read,
// write and idle timeouts enforced per connection, phase by phase.
func (a *App) connListener(ln net.Listener) net.Listener {
	return conn.NewListener(ln, conn.Config{
		Limit:    a.cfg.Concurrency,
		Timeouts: conn.Timeouts{Read: a.cfg.ReadTimeout, Write: a.cfg.WriteTimeout, Idle: a.cfg.IdleTimeout},
		Refuse:   refuseOverload,
		Observe:  a.refusalObserver(),
		Logger:   a.logger,
	})
}

// overloadMessage is the message of the over-concurrency 503.
const overloadMessage = "The server is serving its maximum number of connections; retry later"

// overloadBody is the envelope of the over-concurrency 503, and
// overloadResponse the complete response, both built once. It has no Date
// header: one built once would carry the process start time (a 5xx may
// omit Date, RFC 9110 6.6.1).
var (
	overloadBody     = AppendEnvelope(nil, &Error{Code: codeServiceUnavailable, Message: overloadMessage})
	overloadResponse = append([]byte("HTTP/1.1 503 Service Unavailable\r\n"+
		"Content-Type: application/json\r\n"+
		"Content-Length: "+strconv.Itoa(len(overloadBody))+"\r\n"+
		"Retry-After: 1\r\n"+
		"Connection: close\r\n\r\n"), overloadBody...)
)

// refuseOverload is the connection layer's Refuse: it writes the prebuilt
// 503 to a connection refused for over-concurrency. Cost: one write, no
// allocation.
func refuseOverload(c net.Conn) error {
	_, err := c.Write(overloadResponse)
	return err
}

// Server returns the fasthttp.Server the App serves with (created on first
// use from Config: limits, the transport error handler). Adjust fields
// before the first Serve if Config lacks a knob you need. Its
// ReadTimeout, WriteTimeout and IdleTimeout are zero: Config's timeouts
// are enforced on the connections Serve accepts (see Config.ReadTimeout),
// so serving this fasthttp.Server yourself serves without them (and
// without the connection limit) unless you set its fields. Server boots
// the App (its Handler is the booted handler): register routes,
// middleware and plugins first.
func (a *App) Server() *fasthttp.Server {
	a.srvMu.Lock()
	defer a.srvMu.Unlock()
	if a.server == nil {
		a.server = a.newServer()
	}
	return a.server
}

func (a *App) newServer() *fasthttp.Server {
	cfg := a.cfg
	srv := &fasthttp.Server{
		Handler:               a.Handler(),
		ErrorHandler:          a.transportError,
		Name:                  cfg.ServerHeader,
		NoDefaultServerHeader: cfg.ServerHeader == "",
		MaxRequestBodySize:    cfg.BodyLimit,
		// A form is parsed when a handler asks for it, within Config's
		// limits (ctx_request.go), not while the request is read.
		DisablePreParseMultipartForm: true,
		ReadBufferSize:               cfg.HeaderLimit,
		// ReadTimeout, WriteTimeout and IdleTimeout stay zero: Serve's
		// connections enforce Config's (internal/conn), without the clock
		// reads and deadline moves fasthttp makes per request.
		LazyRequestTime: true, // RequestCtx.Time reads the clock only when asked (observe.go)
		Concurrency:     conn.FasthttpConcurrency(cfg.Concurrency),
		Logger:          fasthttpLogger{a},
		CloseOnShutdown: true,
		// A hijacked connection outlives fasthttp's hijack goroutine:
		// Ctx.Hijack runs the handler on its own and closes the
		// connection when it returns (ctx_detach.go), so that fasthttp's
		// read buffer and RequestCtx are not held for the connection's
		// life.
		KeepHijackedConns: true,
	}
	srv.HeaderReceived = conn.FramingGuard(srv) // refuses ambiguous framing (internal/conn)
	return srv
}

// The messages of the refusals the transport answers for a body or
// headers over the limits (also the document's examples of them).
const (
	bodyTooLargeMessage    = "The request body is larger than the server accepts"
	headersTooLargeMessage = "The request headers are larger than the server accepts"
)

// transportError answers what fasthttp could not hand to a handler (a
// malformed request, a body or headers over the limit, a read timeout, a
// request the framing guard refused) with the envelope, and ends through
// finish. The raw request bytes are never echoed. A connection that never
// sent a byte is closed without a response (conn.ErrorResponse).
func (a *App) transportError(rc *fasthttp.RequestCtx, err error) {
	if !conn.ErrorResponse(rc.Conn()) {
		return
	}
	code := codeBadRequest
	msg := "The request could not be parsed"
	var small *fasthttp.ErrSmallBuffer
	var timeout interface{ Timeout() bool } // net.Error, and in-memory conns that only have Timeout
	switch f := conn.MarkedFault(&rc.Request.Header); {
	case f != conn.FaultNone: // refused by the framing guard
		code, msg = codeBadRequest, f.Message()
		if f == conn.FaultTooLarge { // a body over the limit, announced
			code = codePayloadTooLarge
		}
	case errors.Is(err, conn.ErrBareLFHead): // answered at once, not at the read timeout
		code, msg = codeBadRequest, conn.BareLFHeadMessage
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		code, msg = codePayloadTooLarge, bodyTooLargeMessage
	case errors.As(err, &small):
		code, msg = codeHeadersTooLarge, headersTooLargeMessage
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &timeout) && timeout.Timeout():
		code, msg = codeRequestTimeout, "The request was not received in time"
	}
	rc.Response.Reset()
	status, _ := statusOf(code)
	a.writeEnvelope(&rc.Response, status, code, msg, nil)
	a.finish(rc, nil, transport, code)
}

// fasthttpLogger sends fasthttp's own messages to the App's logger at debug
// level (they are connection-level noise such as client resets).
type fasthttpLogger struct{ a *App }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.a.logger.Debug("fasthttp", "msg", fmt.Sprintf(format, args...))
}
