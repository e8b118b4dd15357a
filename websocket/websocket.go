// Package websocket serves WebSocket routes that keep fx's contract, on
// fasthttp's own WebSocket implementation (github.com/fasthttp/websocket).
//
//	app.Get("/chat", websocket.New(func(c *websocket.Conn) error {
//		for {
//			t, msg, err := c.ReadMessage()
//			if err != nil {
//				return nil // the peer left: its close is already answered
//			}
//			if err := c.WriteMessage(t, msg); err != nil {
//				return nil
//			}
//		}
//	}))
//
// Before the upgrade a WebSocket route is an ordinary GET: the App's, the
// Group's and the route's middleware run (Auth, Tenant, RateLimit, CORS)
// and every refusal is the JSON envelope. The handler itself refuses, as
// envelopes: a request that is not a WebSocket handshake, 426
// FX_UPGRADE_REQUIRED with Upgrade: websocket; a malformed handshake (not
// a GET, older than HTTP/1.1, a version other than 13, a bad key), 400
// FX_BAD_REQUEST; an Origin that Config.Origins does not allow, 403
// FX_FORBIDDEN (a browser page of another site cannot open a connection
// with the user's cookies: cross-site WebSocket hijacking); once Shutdown
// has begun, 503 FX_SERVICE_UNAVAILABLE.
//
// After the upgrade the handler's outcome is the close frame: nil closes
// with 1000; an *fx.Error with 4000 + its status and its code as the
// reason (4401 FX_UNAUTHENTICATED, 4429 APP_SLOW_DOWN ...); a panic or
// any other error with 1011 and FX_INTERNAL_ERROR. The handler's failure
// goes to the App's error boundary when the connection ends, which
// gives the observers its code and logs a 5xx as it logs an HTTP
// handler's (the same "fx: request failed" line and keys). A
// message over Config.ReadLimit closes with 1009, a text message that is
// not UTF-8 with 1007, a frame the protocol forbids with 1002 (the
// client's error: ErrProtocol), Shutdown with 1001 (to every open
// connection, before Shutdown returns). A route answers the same through
// the nethttp adapter as on fasthttp. See docs/websocket.md.
package websocket

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/handlerdecl"
	"github.com/fxhq/fx/nethttp"
	"github.com/valyala/fasthttp"
)

// The message types of ReadMessage and WriteMessage (RFC 6455, section
// 11.8).
const (
	TextMessage   = 1
	BinaryMessage = 2
)

// Config configures a WebSocket route. The zero value is ready: every
// field has a default.
type Config struct {
	// Origins are the Origin values (scheme://host[:port], compared
	// without regard to case) allowed to open a connection; "*" allows
	// any. Empty: a request without Origin (not from a browser) is
	// allowed, and one with an Origin only when it names the request's
	// own scheme (https over TLS, or when the first X-Forwarded-Proto
	// value is https; http otherwise) and its own Host. The Host header is
	// the client's to choose, so a page served under a rebound DNS name
	// passes that default check: list Origins in production. A refused
	// Origin gets 403 FX_FORBIDDEN.
	Origins []string

	// ReadLimit is the largest message the peer may send, in bytes;
	// a larger one closes the connection with 1009. Default 64 KiB.
	ReadLimit int64

	// PingInterval is how often the server pings the peer. Default 25 s.
	PingInterval time.Duration

	// PongTimeout is how long the peer may stay silent (no message, no
	// pong) after a ping before it is taken for dead and its connection
	// closed. Default 10 s. The dead-peer deadline is at most
	// PingInterval + PongTimeout after the last thing read, and no sooner
	// than PongTimeout after the latest ping (less the ping timer's
	// lateness): it moves on the first read after each ping, not on every
	// message. Control frames are processed while the handler reads: a
	// handler that only writes must still keep a ReadMessage loop running.
	PongTimeout time.Duration

	// WriteTimeout bounds each write to the peer (a message, a ping, the
	// close frame); a peer that does not take the bytes within it is
	// dropped. Default 10 s.
	WriteTimeout time.Duration

	// SendQueue is how many messages WriteMessage may queue for a peer
	// that is slower than the handler. A peer that falls further behind
	// is dropped (close 1008, reason "send queue full"): it never holds
	// up the handler, other connections or the tear-down. Default 64.
	SendQueue int

	// CloseTimeout is how long the server waits for the peer's answer to
	// its close frame, and at Shutdown for handlers to return after the
	// 1001, before it closes the connection itself. Default 2 s.
	CloseTimeout time.Duration

	// ReadBufferSize is the size of the connection's read buffer: one
	// read of the socket takes at most this much (a burst of small
	// messages, or the head of a larger one, whose rest is read into
	// the message directly). It defaults to 1 KiB on fasthttp, whose
	// hijacked connection fx reads directly (fasthttp's own read buffer,
	// sized by the App's header limit, goes back to the server at the
	// upgrade), and to 4 KiB under the nethttp adapter. An idle
	// connection holds it for its whole life.
	//
	// WriteBufferSize has no effect: frames are built in buffers shared
	// by every connection of the process and held only while a frame is
	// written, so an idle connection keeps no write buffer.
	ReadBufferSize, WriteBufferSize int

	// Subprotocols are the subprotocols the server speaks, in order of
	// preference (Sec-WebSocket-Protocol); none by default.
	Subprotocols []string
}

func (cfg Config) withDefaults() Config {
	if cfg.ReadLimit <= 0 {
		cfg.ReadLimit = 64 << 10
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = 25 * time.Second
	}
	if cfg.PongTimeout <= 0 {
		cfg.PongTimeout = 10 * time.Second
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	if cfg.SendQueue <= 0 {
		cfg.SendQueue = 64
	}
	if cfg.CloseTimeout <= 0 {
		cfg.CloseTimeout = 2 * time.Second
	}
	if cfg.ReadBufferSize < 0 {
		cfg.ReadBufferSize = 0 // the transport's default (see Config)
	}
	return cfg
}

// The errors a WebSocket route answers before the upgrade (beyond its
// middleware's). They are declared on the route (Declare) for the
// OpenAPI document and fxtest's strict mode.
var (
	// ErrUpgradeRequired (426): the request is not a WebSocket handshake.
	ErrUpgradeRequired = fx.NewCatalogError(fx.ErrorCodes.UpgradeRequired, "This route speaks WebSocket: send a WebSocket handshake (Upgrade: websocket)")
	// ErrBadHandshake (400): the handshake is malformed (not a GET,
	// older than HTTP/1.1, version, key).
	ErrBadHandshake = fx.NewCatalogError(fx.ErrorCodes.BadRequest, "Malformed WebSocket handshake")
	// ErrOrigin (403): the Origin is not allowed (Config.Origins).
	ErrOrigin = fx.NewCatalogError(fx.ErrorCodes.Forbidden, "WebSocket connections from this Origin are not allowed")
	// ErrShuttingDown (503): Shutdown has begun; no new connection.
	ErrShuttingDown = fx.NewCatalogError(fx.ErrorCodes.ServiceUnavailable, "The server is shutting down")
	// ErrNoHijack (500): under the nethttp adapter, the
	// http.ResponseWriter cannot hand the connection over (HTTP/2, or a
	// wrapper that hides http.Hijacker).
	ErrNoHijack = fx.NewCatalogError(fx.ErrorCodes.NodeInternalError, "This net/http connection cannot be taken over for a WebSocket (HTTP/2, or a ResponseWriter without http.Hijacker)")
)

// New returns a handler that upgrades the request to a WebSocket and runs
// h on the connection; register it like any handler:
// app.Get("/ws", websocket.New(h)). h's outcome is the close frame (see
// the package documentation). The Conn is valid until h returns. The
// handler declares its refusals before the upgrade (426, 400, 403, 503):
// any route serving it documents them.
//
// Cost per connection: one goroutine (h's, on the connection fasthttp
// hands over) plus a writer goroutine only while a peer is slower than
// its writes (see Conn.WriteMessage), a timer for the pings, the
// connection's read buffer (Config.ReadBufferSize; no write buffer),
// the send queue (allocated while messages wait, released when it
// empties), and the request's Ctx,
// held until the connection ends so that middleware values stay readable
// and the request is observed once, at its end.
func New(h func(c *Conn) error, config ...Config) fx.Handler {
	if h == nil {
		panic("websocket: New given a nil handler")
	}
	var cfg Config
	if len(config) > 0 {
		cfg = config[0]
	}
	cfg = cfg.withDefaults()
	s := &server{h: h, cfg: cfg}
	for _, o := range cfg.Origins {
		if o == "*" {
			s.anyOrigin = true
		}
		s.origins = append(s.origins, strings.ToLower(strings.TrimRight(o, "/")))
	}
	serve := fx.Handler(s.serve)
	handlerdecl.Declare(serve, refusals)
	return serve
}

// refusals are the errors the handler answers by itself before the
// upgrade. New declares them for its handler, so that every route
// serving it documents them (fx.RouteInfo.Errors), beside what the
// route's own Errors and middleware declare.
var refusals = []*fx.Error{ErrUpgradeRequired, ErrBadHandshake, ErrOrigin, ErrShuttingDown}

// The default read buffers on fasthttp and under the nethttp adapter
// (see Config.ReadBufferSize).
const (
	fastHTTPReadBuffer = 1 << 10
	netHTTPReadBuffer  = 4 << 10
)

// server is one WebSocket route.
type server struct {
	h         func(c *Conn) error
	cfg       Config
	origins   []string
	anyOrigin bool

	// regMu guards registries: the open connections of each App the
	// route serves (shutdown.go).
	regMu      sync.Mutex
	registries []*registry
}

// serve is the route's fx handler, on both transports: the handshake
// checks, then the upgrade. The transport writes the 101 (with what the
// middleware set on the response) and hands the connection over:
// fasthttp's server, or the nethttp adapter through http.Hijacker.
func (s *server) serve(c *fx.Ctx) error {
	rc := c.RequestCtx()
	h := &rc.Request.Header
	rh := &rc.Response.Header
	if err := s.check(rc); err != nil {
		return err
	}
	if w := nethttp.ResponseWriter(c); w != nil && !canHijack(w) {
		return ErrNoHijack // HTTP/2, or a wrapper that hides the Hijacker
	}
	reg := s.registryOf(c.App())
	select {
	case <-c.App().Done():
		return ErrShuttingDown
	default:
	}
	key := string(h.Peek("Sec-WebSocket-Key"))
	sub := s.subprotocol(h, rh)
	end := c.Detach()
	rc.SetStatusCode(fasthttp.StatusSwitchingProtocols)
	rh.Set("Upgrade", "websocket")
	rh.Set("Connection", "Upgrade")
	rh.Set("Sec-WebSocket-Accept", acceptKey([]byte(key)))
	if sub != "" {
		rh.Set("Sec-WebSocket-Protocol", sub)
	}
	readBuffer := cmp.Or(s.cfg.ReadBufferSize, fastHTTPReadBuffer)
	if nethttp.Request(c) != nil {
		readBuffer = cmp.Or(s.cfg.ReadBufferSize, netHTTPReadBuffer)
	}
	c.Hijack(func(nc net.Conn) {
		sk := &sock{Conn: nc}
		wc, err := s.adopt(sk, key, sub, readBuffer)
		if err != nil {
			end(err) // FX_INTERNAL_ERROR, logged as a 5xx by the core
			return
		}
		s.run(c, reg, wc, sk, end)
	})
	return nil
}

// canHijack reports whether w, or a writer it wraps (Unwrap, as
// http.ResponseController follows it), can hand its connection over.
func canHijack(w http.ResponseWriter) bool {
	for range 16 {
		if _, ok := w.(http.Hijacker); ok {
			return true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
	return false
}

// subprotocol is the first of Config.Subprotocols, in the config's order
// of preference, that the client offers (in any of its
// Sec-WebSocket-Protocol lines), or, with none configured, what a
// middleware set on the response, or "".
func (s *server) subprotocol(h *fasthttp.RequestHeader, rh *fasthttp.ResponseHeader) string {
	if len(s.cfg.Subprotocols) == 0 {
		return string(rh.Peek("Sec-WebSocket-Protocol"))
	}
	offered := h.PeekAll("Sec-WebSocket-Protocol")
	for _, p := range s.cfg.Subprotocols {
		for _, line := range offered {
			if tokenIn(line, p) {
				return p
			}
		}
	}
	return ""
}

// check refuses what is not a well-formed, allowed handshake (RFC 6455,
// section 4.2.1); the refusal's hints go in the response header.
func (s *server) check(rc *fasthttp.RequestCtx) error {
	h := &rc.Request.Header
	rh := &rc.Response.Header
	if !tokenIn(h.Peek("Connection"), "upgrade") || !tokenIn(h.Peek("Upgrade"), "websocket") {
		rh.Set("Upgrade", "websocket")
		rh.Set("Sec-WebSocket-Version", "13")
		return ErrUpgradeRequired
	}
	if !h.IsGet() || !atLeastHTTP11(h.Protocol()) {
		return ErrBadHandshake
	}
	if !bytes.Equal(h.Peek("Sec-WebSocket-Version"), []byte("13")) {
		rh.Set("Sec-WebSocket-Version", "13")
		return ErrBadHandshake
	}
	if !validKey(h.Peek("Sec-WebSocket-Key")) {
		return ErrBadHandshake
	}
	if !s.originAllowed(h.Peek("Origin"), rc.Host(), requestScheme(rc)) {
		return ErrOrigin
	}
	return nil
}

// atLeastHTTP11 reports whether proto ("HTTP/1.1") is HTTP 1.1 or later:
// a WebSocket handshake needs 1.1 (RFC 6455, section 4.1).
func atLeastHTTP11(proto []byte) bool {
	v, ok := bytes.CutPrefix(proto, []byte("HTTP/"))
	if !ok {
		return false
	}
	major, minor, _ := bytes.Cut(v, []byte{'.'})
	ma, err := strconv.Atoi(string(major))
	if err != nil {
		return false
	}
	mi := 0
	if len(minor) > 0 {
		if mi, err = strconv.Atoi(string(minor)); err != nil {
			return false
		}
	}
	return ma > 1 || ma == 1 && mi >= 1
}

// tokenIn reports whether the comma-separated header value v holds token
// (compared without regard to case).
func tokenIn(v []byte, token string) bool {
	for _, t := range bytes.Split(v, []byte{','}) {
		if strings.EqualFold(string(bytes.TrimSpace(t)), token) {
			return true
		}
	}
	return false
}

// validKey reports whether k is a Sec-WebSocket-Key: the base64 of 16
// bytes (RFC 6455, section 4.1).
func validKey(k []byte) bool {
	if len(k) != 24 {
		return false
	}
	var dst [18]byte
	n, err := base64.StdEncoding.Decode(dst[:], k)
	return err == nil && n == 16
}

// originAllowed applies Config.Origins to the request's Origin; without
// Config.Origins, an Origin must name the request's own scheme and Host
// (see requestScheme).
func (s *server) originAllowed(origin, host []byte, scheme string) bool {
	if len(origin) == 0 {
		return true // not a browser: a browser always sends Origin on a WebSocket
	}
	if s.anyOrigin {
		return true
	}
	if len(s.origins) > 0 {
		o := strings.ToLower(string(origin))
		for _, a := range s.origins {
			if o == a {
				return true
			}
		}
		return false
	}
	u, err := url.Parse(string(origin))
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Scheme, scheme) && strings.EqualFold(u.Host, string(host))
}

// requestScheme is the scheme the client used: "https" over TLS, or when
// the connection is plain and a TLS-terminating proxy's first
// X-Forwarded-Proto value says "https"; "http" otherwise. Believing the
// header here gives nothing away: the check it serves stops a browser's
// page of another site, and a page cannot set a header on a WebSocket
// handshake.
func requestScheme(rc *fasthttp.RequestCtx) string {
	if rc.IsTLS() {
		return "https"
	}
	v := rc.Request.Header.Peek("X-Forwarded-Proto")
	if i := bytes.IndexByte(v, ','); i >= 0 {
		v = v[:i]
	}
	if strings.EqualFold(string(bytes.TrimSpace(v)), "https") {
		return "https"
	}
	return "http"
}
