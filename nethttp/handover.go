package nethttp

import (
	"bufio"
	"crypto/tls"
	"net"
	"net/http"
	"sync"

	"github.com/valyala/fasthttp"
)

// A connection handed over after a 101 Switching Protocols. A handler
// that takes its connection over (package websocket) calls fx.Ctx.Detach
// and fx.Ctx.Hijack, as on fasthttp's transport; the App's chain returns
// with the 101 and the hijack function registered, and the adapter then
// does what fasthttp's server does: it takes the connection from net/http
// (http.Hijacker), writes the 101's head as fasthttp writes it (the
// handler's and the middleware's headers, Server, Date), and calls the
// hijack function with the connection, the bytes net/http had already
// read from it first. ServeHTTP returns when the connection is closed,
// so the request's context (the parent of the handler's c.Context())
// lives as long as the connection.

// handOver hijacks w's connection, writes e's response head on it and
// runs hf on it; it returns when the connection is closed. A connection
// net/http cannot hand over (the handler checks first: HTTP/2, a writer
// without http.Hijacker) is reported as an *AdapterError and answered 500
// FX_NODE_INTERNAL_ERROR; hf then runs on a connection already closed, so
// that the request held past its 101 ends and is observed.
func (h *handler) handOver(w http.ResponseWriter, r *http.Request, e *exchange, hf fasthttp.HijackHandler) {
	rh := &e.rc.Response.Header
	if h.serverName != "" && len(rh.Server()) == 0 {
		rh.SetServer(h.serverName)
	}
	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		dead, other := net.Pipe()
		_ = other.Close()
		hf(dead)
		h.writeFailed(w, r, e, &AdapterError{Op: OpWriteResponse, Err: err})
		return
	}
	e.committed = true
	held := &heldConn{Conn: nc, done: make(chan struct{})}
	// The head's write is not checked here: a failed one is the
	// handler's first failed read or write (below).
	if _, err := brw.Writer.Write(rh.Header()); err == nil {
		_ = brw.Writer.Flush()
	}
	var conn net.Conn = held
	if tc, ok := nc.(*tls.Conn); ok {
		conn = heldTLS{heldConn: held, tls: tc}
	}
	// A failed write of the head is the handler's first failed read or
	// write: it learns it as it would of a peer gone after the 101.
	hf(&readAhead{Conn: conn, r: brw.Reader})
	<-held.done
}

// heldConn is the connection net/http handed over; its Close ends
// handOver's wait.
type heldConn struct {
	net.Conn
	once sync.Once
	done chan struct{}
}

func (c *heldConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { close(c.done) })
	return err
}

// UnsafeConn returns the connection itself (a *net.TCPConn, a *tls.Conn),
// as fasthttp's hijacked connection does: a writer that wants the socket
// (package websocket's non-blocking writes) finds it.
func (c *heldConn) UnsafeConn() net.Conn { return c.Conn }

// heldTLS is a heldConn over TLS: fasthttp's RequestCtx.IsTLS and
// TLSConnectionState recognise it by these two methods.
type heldTLS struct {
	*heldConn
	tls *tls.Conn
}

func (c heldTLS) Handshake() error                     { return c.tls.Handshake() }
func (c heldTLS) ConnectionState() tls.ConnectionState { return c.tls.ConnectionState() }

// readAhead is the handed-over connection as the hijack function first
// reads it: what net/http's reader already holds, then the connection.
// Its UnsafeConn is the connection without that reader, which the core's
// hand-over takes once it has drained the reader (as it does with
// fasthttp's hijacked connection).
type readAhead struct {
	net.Conn
	r *bufio.Reader
}

// Read takes what the reader holds, then reads the connection directly:
// a read through net/http's reader that fails (the core's hand-over ends
// its drain with a passed deadline) would cancel the request's context.
func (c *readAhead) Read(p []byte) (int, error) {
	if c.r.Buffered() > 0 {
		return c.r.Read(p)
	}
	return c.Conn.Read(p)
}

func (c *readAhead) UnsafeConn() net.Conn { return c.Conn }
