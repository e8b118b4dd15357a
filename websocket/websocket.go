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
// FX_UPGRADE_REQUIRED with Upgrade: websocket; a malformed handshake, 400
// FX_BAD_REQUEST; an Origin that Config.Origins does not allow, 403
// FX_FORBIDDEN (a browser page of another site cannot open a connection
// with the user's cookies: cross-site WebSocket hijacking); once Shutdown
// has begun, 503 FX_SERVICE_UNAVAILABLE.
//
// After the upgrade the handler's outcome is the close frame: nil closes
// with 1000; an *fx.Error with 4000 + its status and its code as the
// reason (4401 FX_UNAUTHENTICATED, 4429 APP_SLOW_DOWN ...); a panic or
// any other error with 1011 and FX_INTERNAL_ERROR, logged like a 5xx. A
// message over Config.ReadLimit closes with 1009, a text message that is
// not UTF-8 with 1007, Shutdown with 1001 (to every open connection,
// before Shutdown returns). See docs/websocket.md.
package websocket

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/fxhq/fx"
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
	// allowed, and one with an Origin only when its host is the request's
	// own Host. A refused Origin gets 403 FX_FORBIDDEN.
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
	// ErrBadHandshake (400): the handshake is malformed (version, key).
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
// the package documentation). The Conn is valid until h returns.
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
	return s.serve
}

// fastHTTPReadBuffer is the default read buffer on fasthttp (see
// Config.ReadBufferSize).
const fastHTTPReadBuffer = 1 << 10

// server is one WebSocket route.
type server struct {
	h         func(c *Conn) error
	cfg       Config
	origins   []string
	anyOrigin bool
}

// serve is the route's fx handler: the handshake checks, then the
// upgrade. fasthttp writes the 101 (with what the middleware set on the
// response) and hands the connection over.
func (s *server) serve(c *fx.Ctx) error {
	if r := nethttp.Request(c); r != nil {
		return s.serveNetHTTP(c, r)
	}
	rc := c.RequestCtx()
	h := &rc.Request.Header
	rh := &rc.Response.Header
	if err := s.check(rh, func(k string) []byte { return h.Peek(k) }, rc.Host()); err != nil {
		return err
	}
	if !rc.IsGet() {
		return ErrBadHandshake
	}
	reg := registryOf(c.App())
	if c.App().ShuttingDown() {
		return ErrShuttingDown
	}
	key := string(h.Peek("Sec-WebSocket-Key"))
	sub := s.subprotocol(h.Peek("Sec-WebSocket-Protocol"), rh)
	end := c.Detach()
	rc.SetStatusCode(fasthttp.StatusSwitchingProtocols)
	rh.Set("Upgrade", "websocket")
	rh.Set("Connection", "Upgrade")
	rh.Set("Sec-WebSocket-Accept", acceptKey([]byte(key)))
	if sub != "" {
		rh.Set("Sec-WebSocket-Protocol", sub)
	}
	c.Hijack(func(nc net.Conn) {
		sk := &sock{Conn: nc}
		wc, err := s.adopt(sk, key, sub, cmp.Or(s.cfg.ReadBufferSize, fastHTTPReadBuffer))
		if err != nil {
			end(fx.ErrorCodes.InternalError)
			return
		}
		s.run(c, reg, wc, sk, end)
	})
	return nil
}

// subprotocol is the first of Config.Subprotocols the client offers
// (offered: its Sec-WebSocket-Protocol), or, with none configured, what
// a middleware set on the response, or "".
func (s *server) subprotocol(offered []byte, rh *fasthttp.ResponseHeader) string {
	if len(s.cfg.Subprotocols) == 0 {
		return string(rh.Peek("Sec-WebSocket-Protocol"))
	}
	for _, p := range s.cfg.Subprotocols {
		for _, o := range bytes.Split(offered, []byte{','}) {
			if string(bytes.TrimSpace(o)) == p {
				return p
			}
		}
	}
	return ""
}

// serveNetHTTP upgrades a request the nethttp adapter serves, through
// http.Hijacker, and serves the connection before returning: net/http
// gives every request its own goroutine, which the connection keeps.
func (s *server) serveNetHTTP(c *fx.Ctx, r *http.Request) error {
	rh := &c.RequestCtx().Response.Header
	if err := s.check(rh, func(k string) []byte { return []byte(r.Header.Get(k)) }, []byte(r.Host)); err != nil {
		return err
	}
	w := nethttp.ResponseWriter(c)
	if _, ok := w.(http.Hijacker); !ok {
		return ErrNoHijack // HTTP/2, or a wrapper that hides the Hijacker
	}
	reg := registryOf(c.App())
	if c.App().ShuttingDown() {
		return ErrShuttingDown
	}
	up := s.upgrader(cmp.Or(s.cfg.ReadBufferSize, 4<<10))
	sk := &sock{passHandshake: true}
	wc, err := up.Upgrade(&wrapHijack{ResponseWriter: w, sk: sk}, r, nil)
	if err != nil {
		return ErrNoHijack
	}
	rc := c.RequestCtx()
	rc.SetStatusCode(fasthttp.StatusSwitchingProtocols)
	rc.Hijack(func(net.Conn) {}) // the adapter writes nothing more
	s.run(c, reg, wc, sk, func(string) {})
	return nil
}

// check refuses what is not a well-formed, allowed handshake; get reads a
// request header, rh is the response header the refusal's hints go in.
func (s *server) check(rh *fasthttp.ResponseHeader, get func(string) []byte, host []byte) error {
	if !tokenIn(get("Connection"), "upgrade") || !tokenIn(get("Upgrade"), "websocket") {
		rh.Set("Upgrade", "websocket")
		rh.Set("Sec-WebSocket-Version", "13")
		return ErrUpgradeRequired
	}
	if !bytes.Equal(get("Sec-WebSocket-Version"), []byte("13")) {
		rh.Set("Sec-WebSocket-Version", "13")
		return ErrBadHandshake
	}
	if !validKey(get("Sec-WebSocket-Key")) {
		return ErrBadHandshake
	}
	if !s.originAllowed(get("Origin"), host) {
		return ErrOrigin
	}
	return nil
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

// originAllowed applies Config.Origins to the request's Origin.
func (s *server) originAllowed(origin, host []byte) bool {
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
	return strings.EqualFold(u.Host, string(host))
}
