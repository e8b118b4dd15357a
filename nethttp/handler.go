package nethttp

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/handover"
	"github.com/valyala/fasthttp"
)

// Handler returns an http.Handler that serves app: every request is
// translated into a fasthttp.RequestCtx, run through app's booted handler
// (app.Handler(), which boots the App), and the fasthttp response is
// translated back. Routes, middleware, the hook and every envelope behave
// as on app.Listen.
//
// The request body is read fully before dispatch, up to app.Config().BodyLimit;
// a larger body (declared or actual) answers 413 FX_PAYLOAD_TOO_LARGE
// without reading the rest. A body the client framed badly or cut short
// (malformed chunking, fewer bytes than its Content-Length) answers 400
// FX_BAD_REQUEST, one not received within the http.Server's ReadTimeout 408
// FX_REQUEST_TIMEOUT, as on fasthttp's transport; a body that cannot be read
// for any other reason answers 500 FX_NODE_INTERNAL_ERROR; so does a
// response net/http cannot express and a
// panic in the adapter itself (a panic in an fx handler or middleware is
// the App's, as on fasthttp). All of these pass through app's error
// boundary: the hook sees an *AdapterError (or the 413 *fx.Error), 5xx are
// logged. A failure after the response status was sent cannot change the
// status any more: it is reported to the boundary and the response is
// aborted (http.ErrAbortHandler), so the client sees a broken response,
// never a silently truncated one.
//
// Cost: the RequestCtx and the body buffer are pooled and reset between
// requests (nothing of one request is visible to the next); a request
// costs the header translation both ways (one string per response header
// value, as net/http's Header map requires) on top of the App's own work.
// The repository README's nethttp section has measured figures.
func Handler(app *fx.App) http.Handler {
	cfg := app.Config()
	h := &handler{
		app:        app,
		serve:      app.Handler(),
		bodyLimit:  cfg.BodyLimit,
		serverName: cfg.ServerHeader,
		logger:     fasthttpLogger{app.Logger()},
	}
	h.pool.New = func() any { return newExchange() }
	return h
}

type handler struct {
	app        *fx.App
	serve      fasthttp.RequestHandler
	bodyLimit  int
	serverName string
	logger     fasthttp.Logger
	pool       sync.Pool // *exchange
}

// exchange is the pooled state of one request.
type exchange struct {
	rc   fasthttp.RequestCtx
	conn addrConn
	tls  tlsConn
	// raddr and ip hold the parsed remote address without allocating.
	raddr net.TCPAddr
	ip    [16]byte
	buf   []byte // request body buffer
	// committed is set once the status line is handed to net/http: from
	// then on a failure can only abort the response.
	committed bool
}

// maxKeptBody is the largest body buffer kept in the pool; bigger ones are
// left to the garbage collector so one large upload does not pin memory.
const maxKeptBody = 64 << 10

func newExchange() *exchange {
	e := &exchange{}
	e.tls.addrConn = &e.conn
	return e
}

// requestKey is the RequestCtx user value under which the *http.Request is
// kept for Request and Context.
type requestKey struct{}

// Request returns the *http.Request being served when c runs under
// Handler, or nil on the fasthttp transport. Its Body has already been
// read (use c.Body()); its Context is done when the client goes away.
func Request(c *fx.Ctx) *http.Request {
	r, _ := c.RequestCtx().UserValue(requestKey{}).(*http.Request)
	return r
}

// writerKey is the RequestCtx user value under which the
// http.ResponseWriter is kept for ResponseWriter.
type writerKey struct{}

// ResponseWriter returns the http.ResponseWriter of the request c serves
// under Handler, or nil on the fasthttp transport. A handler that takes
// the connection over does it as on fasthttp (fx.Ctx.Detach, a 101,
// fx.Ctx.Hijack; see the package documentation) and reads the writer
// only to refuse, before that, a request whose connection net/http cannot
// hand over (HTTP/2, or a wrapper without http.Hijacker): package
// websocket does. Anything written through it bypasses fx's response:
// do not use it for that.
func ResponseWriter(c *fx.Ctx) http.ResponseWriter {
	w, _ := c.RequestCtx().UserValue(writerKey{}).(http.ResponseWriter)
	return w
}

// Context returns c.Context(). Under Handler, the adapter makes the
// *http.Request's context its parent (fx.SetRequestContext), so it is done
// when the client goes away (connection closed, HTTP/2 stream reset) or
// when the handler returns. App.Shutdown does not cancel it (the
// http.Server owns the request; cancel the server's BaseContext for that).
// Kept for code written before Ctx.Context saw the client.
func Context(c *fx.Ctx) context.Context {
	return c.Context()
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e := h.pool.Get().(*exchange)
	e.committed = false
	defer func() {
		if p := recover(); p != nil {
			// e is in an unknown state: it is not returned to the pool.
			h.recovered(w, r, e, p)
		}
	}()
	if h.exchange(w, r, e) {
		e.release()
		h.pool.Put(e)
	}
}

// exchange serves r with e and reports whether e may be reused.
func (h *handler) exchange(w http.ResponseWriter, r *http.Request, e *exchange) (reusable bool) {
	h.prepare(e, r)
	rc := &e.rc
	if err := h.readBody(e, r); err != nil {
		h.app.ServeError(rc, err)
	} else if r.Context().Err() != nil {
		return true // the client is gone: nobody would receive the answer
	} else {
		rc.SetUserValue(writerKey{}, w)
		h.serve(rc)
		if rc.Hijacked() && rc.Response.StatusCode() == fasthttp.StatusSwitchingProtocols {
			if hf, ok := rc.UserValue(handover.Key{}).(fasthttp.HijackHandler); ok {
				h.handOver(w, r, e, hf) // fx.Ctx.Hijack: the connection is the handler's now
				return false
			}
		}
	}
	if err := h.writeResponse(w, r, e); err != nil {
		h.writeFailed(w, r, e, err)
	}
	return !rc.Hijacked()
}

// writeFailed reports a failure to translate or write the response.
// Before the status is sent the client gets the envelope; after, the
// boundary still sees the failure (hook, log) and the response is aborted.
func (h *handler) writeFailed(w http.ResponseWriter, r *http.Request, e *exchange, err error) {
	rc := &e.rc
	rc.Response.Reset()
	h.app.ServeError(rc, err)
	if e.committed {
		if r.Context().Err() != nil {
			return // the client is gone; there is no response left to abort
		}
		panic(http.ErrAbortHandler)
	}
	if err := h.writeResponse(w, r, e); err != nil && !e.committed {
		writeStatic(w)
	}
}

// recovered handles a panic of the adapter (fx's own chain recovers its
// panics): the boundary sees an *AdapterError wrapping the raw value and
// the client gets 500 FX_NODE_INTERNAL_ERROR, or an aborted response when
// the status was already sent.
func (h *handler) recovered(w http.ResponseWriter, r *http.Request, e *exchange, p any) {
	if p == http.ErrAbortHandler {
		panic(p) // ours, from writeFailed: let net/http abort the response
	}
	err := &AdapterError{Op: OpServe, Err: &fx.PanicError{Value: p, Stack: debug.Stack()}}
	committed := e.committed
	defer func() {
		if p2 := recover(); p2 != nil {
			h.app.Logger().LogAttrs(context.Background(), slog.LevelError,
				"nethttp: reporting an adapter panic panicked too", slog.Any("panic", p), slog.Any("then", p2))
			if committed {
				panic(http.ErrAbortHandler)
			}
			writeStatic(w)
		}
	}()
	// A fresh exchange: the panicking one may be half-translated.
	f := newExchange()
	f.rc.Init2(&f.conn, h.logger, true)
	f.rc.Request.Header.SetMethod(r.Method)
	f.rc.Request.SetRequestURI(requestURI(r))
	h.app.ServeError(&f.rc, err)
	if committed {
		panic(http.ErrAbortHandler)
	}
	if werr := h.writeResponse(w, r, f); werr != nil && !f.committed {
		writeStatic(w)
	}
}

// staticBody is the last-resort reply, when even the boundary failed.
var staticBody = fx.AppendEnvelope(nil, errServe)

func writeStatic(w http.ResponseWriter) {
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(staticBody)))
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write(staticBody) // a failed write has nothing left to report to
}

// release clears everything of the request so the next one sees nothing
// of it.
func (e *exchange) release() {
	rc := &e.rc
	_ = rc.Response.CloseBodyStream() // the body is discarded: its close error tells no one anything
	rc.Request.Reset()                // headers, URI, body, user values
	rc.Response.Reset()
	rc.SetRemoteAddr(nil)
	e.conn = addrConn{}
	e.tls.state = nil
	e.raddr = net.TCPAddr{}
	if cap(e.buf) > maxKeptBody {
		e.buf = nil
	}
}

// prepare fills e.rc from r (everything but the body).
func (h *handler) prepare(e *exchange, r *http.Request) {
	e.conn.local, _ = r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if e.conn.local == nil {
		e.conn.local = zeroAddr
	}
	e.conn.remote = e.remoteAddr(r.RemoteAddr)
	var conn net.Conn = &e.conn
	if r.TLS != nil {
		e.tls.state = r.TLS
		conn = &e.tls
	}
	rc := &e.rc
	rc.Init2(conn, h.logger, false)

	req := &rc.Request
	method := r.Method
	if method == "" {
		method = http.MethodGet // net/http's meaning of ""
	}
	req.Header.SetMethod(method)
	req.SetRequestURI(requestURI(r))
	if r.Proto != "" {
		req.Header.SetProtocol(r.Proto)
	}
	req.Header.SetHost(r.Host)
	for k, vs := range r.Header {
		if skipRequestHeader(k) {
			continue
		}
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if r.TLS != nil {
		req.URI().SetScheme("https")
	}
	rc.SetUserValue(requestKey{}, r)
	fx.SetRequestContext(rc, r.Context()) // c.Context() is done when the client goes away
}

// requestURI is the request target as the client sent it.
func requestURI(r *http.Request) string {
	if r.RequestURI != "" {
		return r.RequestURI
	}
	if r.URL != nil {
		return r.URL.RequestURI() // a request built in code, not read by a server
	}
	return "/"
}

// skipRequestHeader reports the headers not copied to fasthttp: hop-by-hop
// ones and Content-Length (set from the body actually read). Connection
// and Upgrade are copied, as fasthttp's transport keeps them: a handler
// reads a WebSocket handshake from them.
func skipRequestHeader(k string) bool {
	switch k {
	case "Content-Length", "Transfer-Encoding", "Trailer", "Te", "Keep-Alive",
		"Proxy-Connection", "Host":
		return true
	}
	return false
}

// readBody reads r's body into e.buf, up to the body limit.
func (h *handler) readBody(e *exchange, r *http.Request) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	limit := h.bodyLimit
	if r.ContentLength > int64(limit) {
		return errTooLarge // answered without reading a byte of it
	}
	buf := e.buf[:0]
	if n := int(r.ContentLength); n > 0 && cap(buf) < n+1 {
		buf = make([]byte, 0, n+1) // +1: room to see EOF without growing
	}
	defer func() { e.buf = buf[:0] }()
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow
		}
		end := min(cap(buf), limit+1) // reading limit+1 bytes proves "too large"
		n, err := r.Body.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if len(buf) > limit {
			return errTooLarge
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return &AdapterError{Op: OpReadBody, Err: err}
		}
	}
	if len(buf) > 0 {
		e.rc.Request.SetBodyRaw(buf)
	}
	e.rc.Request.Header.SetContentLength(len(buf))
	return nil
}

// writeResponse translates e.rc.Response onto w. It returns an
// *AdapterError when the response cannot be expressed or written; e.committed
// tells whether the status had been sent by then.
func (h *handler) writeResponse(w http.ResponseWriter, r *http.Request, e *exchange) error {
	resp := &e.rc.Response
	status := resp.StatusCode()
	if status < 200 || status > 999 {
		// net/http treats 1xx as informational and panics outside 100-999.
		return &AdapterError{Op: OpWriteResponse, Err: errStatus(status)}
	}
	stream := resp.IsBodyStream()
	var body []byte
	if !stream {
		body = resp.Body()
	}

	hdr := w.Header()
	for k, v := range resp.Header.All() {
		switch string(k) { // fasthttp has normalised the names
		case "Content-Type", "Content-Length", "Connection", "Transfer-Encoding",
			"Keep-Alive", "Proxy-Connection", "Te", "Trailer":
			continue
		case "Upgrade":
			if status != fasthttp.StatusUpgradeRequired {
				continue // a 426 names the protocol to upgrade to (RFC 9110, 15.5.22)
			}
		}
		key := headerKey(k)
		hdr[key] = append(hdr[key], string(v))
	}
	// Content-Type exactly as fasthttp writes it: the one set; else, for a
	// non-empty body, the default (unless SetNoDefaultContentType); else
	// none.
	ct := resp.Header.ContentType() // the default when unset and allowed
	explicit := len(ct) > 0
	if explicit {
		resp.Header.SetNoDefaultContentType(true)
		explicit = len(resp.Header.ContentType()) > 0
		resp.Header.SetNoDefaultContentType(false) // it was false: ct had the default
	}
	switch {
	case explicit:
		hdr["Content-Type"] = []string{headerValue(ct)}
	case len(ct) > 0 && (stream || len(body) > 0):
		hdr["Content-Type"] = defaultContentType
	default:
		hdr["Content-Type"] = nil // none, and no sniffing by net/http
	}
	if h.serverName != "" && len(resp.Header.Server()) == 0 {
		hdr["Server"] = []string{h.serverName}
	}
	bodyAllowed := status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
	if bodyAllowed {
		switch {
		case !stream:
			hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
		case resp.Header.ContentLength() >= 0:
			hdr["Content-Length"] = []string{strconv.Itoa(resp.Header.ContentLength())}
		}
	}

	e.committed = true
	w.WriteHeader(status)
	if !bodyAllowed || r.Method == http.MethodHead {
		return nil // (release closes an unread stream)
	}
	var err error
	if stream {
		fw := flushWriter{w: w}
		fw.f, _ = w.(http.Flusher)
		err = resp.BodyWriteTo(fw)
	} else if len(body) > 0 {
		_, err = w.Write(body)
	}
	if err != nil {
		return &AdapterError{Op: OpWriteResponse, Err: err}
	}
	return nil
}

var defaultContentType = []string{"text/plain; charset=utf-8"}

type errStatus int

func (s errStatus) Error() string {
	return "status " + strconv.Itoa(int(s)) + " cannot be sent as a final net/http response"
}

// headerKey returns k as a string, without allocating for common names.
func headerKey(k []byte) string {
	switch string(k) {
	case "Set-Cookie":
		return "Set-Cookie"
	case "Cache-Control":
		return "Cache-Control"
	case "Vary":
		return "Vary"
	case "Location":
		return "Location"
	case "Www-Authenticate":
		return "Www-Authenticate"
	case "X-Request-Id":
		return "X-Request-Id"
	case "Access-Control-Allow-Origin":
		return "Access-Control-Allow-Origin"
	case "Server":
		return "Server"
	case "Content-Encoding":
		return "Content-Encoding"
	}
	return http.CanonicalHeaderKey(string(k))
}

// headerValue returns v as a string, without allocating for the common
// content types.
func headerValue(v []byte) string {
	switch string(v) {
	case "application/json":
		return "application/json"
	case "text/plain; charset=utf-8":
		return "text/plain; charset=utf-8"
	case "text/html; charset=utf-8":
		return "text/html; charset=utf-8"
	}
	return string(v)
}

// flushWriter flushes after every write, so streamed bodies (server-sent
// events, progress output) reach the client as they are produced.
type flushWriter struct {
	w http.ResponseWriter
	f http.Flusher
}

func (fw flushWriter) Write(p []byte) (int, error) {
	n, err := fw.w.Write(p)
	if err == nil && fw.f != nil {
		fw.f.Flush()
	}
	return n, err
}

// remoteAddr parses net/http's RemoteAddr ("ip:port") into e.raddr without
// allocating; anything else is kept as an opaque address.
func (e *exchange) remoteAddr(s string) net.Addr {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		if s == "" {
			return zeroAddr
		}
		return opaqueAddr(s)
	}
	a := ap.Addr()
	if a.Is4() || a.Is4In6() {
		v4 := a.Unmap().As4()
		copy(e.ip[:], v4[:])
		e.raddr.IP = e.ip[:4]
	} else {
		e.ip = a.As16()
		e.raddr.IP = e.ip[:16]
	}
	e.raddr.Port = int(ap.Port())
	e.raddr.Zone = a.Zone()
	return &e.raddr
}

var zeroAddr net.Addr = &net.TCPAddr{IP: net.IPv4zero}

// opaqueAddr is a remote address that is not ip:port (a unix socket, a
// test's made-up value).
type opaqueAddr string

func (a opaqueAddr) Network() string { return "unknown" }
func (a opaqueAddr) String() string  { return string(a) }

// addrConn is the net.Conn fasthttp's RequestCtx is initialised with: it
// only answers the addresses (the real connection belongs to net/http).
type addrConn struct{ local, remote net.Addr }

func (c *addrConn) Read([]byte) (int, error)         { return 0, errNotAConn }
func (c *addrConn) Write([]byte) (int, error)        { return 0, errNotAConn }
func (c *addrConn) Close() error                     { return nil }
func (c *addrConn) LocalAddr() net.Addr              { return c.local }
func (c *addrConn) RemoteAddr() net.Addr             { return c.remote }
func (c *addrConn) SetDeadline(time.Time) error      { return nil }
func (c *addrConn) SetReadDeadline(time.Time) error  { return nil }
func (c *addrConn) SetWriteDeadline(time.Time) error { return nil }

// tlsConn is addrConn on a TLS connection: fasthttp's IsTLS and
// TLSConnectionState recognise it by these two methods.
type tlsConn struct {
	*addrConn
	state *tls.ConnectionState
}

func (c *tlsConn) Handshake() error                     { return nil }
func (c *tlsConn) ConnectionState() tls.ConnectionState { return *c.state }

// fasthttpLogger sends fasthttp's messages for the RequestCtx to the App's
// logger at debug level.
type fasthttpLogger struct{ l *slog.Logger }

func (f fasthttpLogger) Printf(format string, args ...any) {
	if f.l.Enabled(context.Background(), slog.LevelDebug) {
		f.l.Debug("fasthttp", "msg", fmt.Sprintf(format, args...))
	}
}
