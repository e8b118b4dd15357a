package websocket

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	ws "github.com/fasthttp/websocket"
	"github.com/fxhq/fx"
	json "github.com/goccy/go-json"
)

// Conn is one WebSocket connection, handed to the route's handler. It is
// valid until the handler returns; the connection is then closed with
// the handler's outcome (see the package documentation).
//
// ReadMessage (and ReadJSON) must be called from one goroutine at a time,
// the handler's or one it waits for. WriteMessage (and WriteJSON) may be
// called from any number of goroutines and never block: a message is
// written on the caller's goroutine when the connection takes it at once,
// and otherwise waits in a bounded send queue that a writer goroutine
// drains, so a slow peer never blocks the caller (a peer that falls
// Config.SendQueue messages behind is dropped instead). The writer runs
// only while messages wait; an idle connection has no goroutine but its
// handler's, and its pings come from a timer.
type Conn struct {
	// Locks: a Conn has two mutexes, qmu (the write side and its queue) and
	// sockMu (the socket, until run releases it), and no lock order because
	// they never nest: each is taken alone and released before the other is
	// taken, and neither is held across anything that may block (a write or
	// read of the socket, a channel receive, the handler, the core's end).
	// Under qmu run only bookkeeping, closes of channels, goroutine starts, a
	// timer reset and the writer's clearing of its write deadline
	// (idleWriter); under sockMu only the socket's deadline setters. The
	// rest of what goroutines share is atomic (stopped, closing, dropped,
	// pinged, closed) or belongs to one goroutine at a time (the reader's
	// counters; the write side's fields and counters, handed on under qmu).

	ctx *fx.Ctx
	ws  *ws.Conn
	sk  *sock // what the library reads from and writes its own frames to
	cfg *Config

	stopped atomic.Bool // the connection is being torn down (shut)
	once    sync.Once   // sets stopped
	ping    *time.Timer // the next ping (a timer, not a goroutine)

	// The write side (see the file on writing): out is the connection
	// frames are written to, try how a write is attempted without
	// blocking (raw, rawWrite, rawP, rawN, rawErr serve tryRaw and belong
	// to the holder of the write side).
	out      net.Conn
	try      tryKind
	raw      syscall.RawConn
	rawWrite func(fd uintptr) bool
	rawP     []byte
	rawN     int
	rawErr   error
	pastSet  bool // tryPipe: the write deadline is already in the past

	qmu         sync.Mutex
	rest        []byte        // the unwritten end of a frame begun: the next bytes on the wire
	restN       int           // its payload's length, or sentControl, sentClose
	ctrl        [][]byte      // control frames waiting, sent before queue
	queue       []outMsg      // queue[head:] wait for the writer; at most SendQueue data messages
	head        int           // the next message to write
	writing     bool          // the write side is taken: by a caller's write or the writer goroutine
	shutQ       bool          // no more data messages are taken (set under qmu by shut)
	closeQueued bool          // the close frame is queued or sent: no more control frames
	noWrites    bool          // the tear-down has begun waiting for the writer: nothing more is written
	last        chan struct{} // closed when the close frame queued by finishQueue is sent or the writer gave up
	freed       chan struct{} // made by the tear-down while the write side is taken; closed when it is freed

	closing atomic.Bool // the handler returned: no more messages are taken
	dropped atomic.Bool // the socket's deadlines are in the past (dropWith)

	// sockMu guards the socket against goroutines other than the
	// handler's (Shutdown's 1001, the ping timer, a drop): they hold it
	// shared while they touch the socket, and run takes it to set released
	// before it closes the socket, after which fasthttp reclaims it.
	sockMu   sync.RWMutex
	released bool

	// closed is the close frame sent, or received first (recordClose):
	// set once, nil until then.
	closed atomic.Pointer[closeRecord]

	pinged  atomic.Bool // a ping went out since extendRead last moved the dead-peer deadline
	readSet bool        // extendRead set the dead-peer deadline once (the reading goroutine's)

	// The counters observe reports. msgsIn and bytesIn belong to the
	// reading goroutine, msgsOut and bytesOut to the holder of the write
	// side (handed on under qmu); observe reads them once the handler
	// returned and the write side was given up (awaitWriteSide), so plain
	// integers serve: no atomic add per message.
	msgsIn, msgsOut, bytesIn, bytesOut int64
}

// Errors of Conn's methods.
var (
	// ErrClosed: the connection is closed (by the peer, a failure, the
	// handler's end or Shutdown); nothing more can be sent or read.
	ErrClosed = errors.New("websocket: connection closed")
	// ErrQueueFull: the peer fell Config.SendQueue messages behind; it is
	// dropped (close 1008).
	ErrQueueFull = errors.New("websocket: send queue full; peer dropped")
	// ErrInvalidUTF8: the peer sent a text message that is not UTF-8; the
	// connection is closed with 1007.
	ErrInvalidUTF8 = errors.New("websocket: text message is not valid UTF-8")
	// ErrReadLimit: the peer sent a message over Config.ReadLimit; the
	// connection is closed with 1009.
	ErrReadLimit = ws.ErrReadLimit
	// ErrProtocol: the peer broke the protocol (RFC 6455): a reserved bit
	// set, an unknown opcode, an unmasked frame, a control frame over 125
	// bytes or fragmented, a close frame of one byte, a bad close code...
	// The connection is closed with 1002; the error ReadMessage returns
	// wraps ErrProtocol and says what was wrong. It is the peer's doing: a
	// handler that returns it is not logged as failing, and the observers
	// see FX_BAD_REQUEST.
	ErrProtocol = errors.New("websocket: protocol error")
)

// Ctx returns the request's Ctx, as the middleware left it: Value, the
// principal (middleware.PrincipalFrom), the tenant (middleware.TenantFrom),
// Param, Query, Header and LogAttrs all answer as they did before the
// upgrade. It is valid until the handler returns and must be used by one
// goroutine at a time; c.Ctx().Context() ends when the connection ends or
// the App shuts down. What the handler adds with AddLogAttrs goes onto
// the connection's access-log line.
func (c *Conn) Ctx() *fx.Ctx { return c.ctx }

// Context returns the connection's context: done when the connection
// ends or the App shuts down (it is c.Ctx().Context()).
func (c *Conn) Context() context.Context { return c.ctx.Context() }

// Subprotocol returns the negotiated subprotocol, or "".
func (c *Conn) Subprotocol() string { return c.ws.Subprotocol() }

// RemoteAddr returns the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.ws.RemoteAddr() }

// ReadMessage returns the next data message: its type (TextMessage or
// BinaryMessage) and payload, which the caller owns. It answers pings and
// processes pongs and the peer's close while it waits. It fails with a
// *CloseError when the peer closed (its close is answered), ErrReadLimit
// (closed 1009), ErrInvalidUTF8 (closed 1007), or the network error of a
// vanished peer or passed dead-peer deadline. Cost: the payload is
// allocated per message.
func (c *Conn) ReadMessage() (messageType int, data []byte, err error) {
	t, p, err := c.ws.ReadMessage()
	if err != nil {
		return 0, nil, c.readFailed(err)
	}
	c.msgsIn++
	c.bytesIn += int64(len(p))
	if t == TextMessage && !utf8.Valid(p) {
		c.closeWith(ws.CloseInvalidFramePayloadData, "invalid UTF-8")
		return 0, nil, ErrInvalidUTF8
	}
	c.extendRead()
	return t, p, nil
}

// WriteMessage sends a data message (TextMessage or BinaryMessage) to
// the peer without blocking: when nothing is waiting to be written, the
// frame is written on the caller's goroutine with one write that does
// not wait for the peer (over TCP, and on fasthttp's in-memory
// connections; over TLS every message takes the queue); what the
// connection does not take at once is queued. data may be reused as
// soon as WriteMessage returns. It returns ErrClosed once the connection
// is closing and ErrQueueFull when the peer has fallen Config.SendQueue
// messages behind (the peer is then dropped with 1008). A nil error
// means written to the connection or queued, not delivered. Cost: on the
// caller's goroutine, a copy of data into a pooled frame buffer and one
// write, no allocation; queued, a copy of data (or of the part the
// socket did not take) and, unless a writer is running, a writer
// goroutine that ends once the queue is empty.
func (c *Conn) WriteMessage(messageType int, data []byte) error {
	if messageType != TextMessage && messageType != BinaryMessage {
		return fmt.Errorf("websocket: WriteMessage given message type %d; want TextMessage or BinaryMessage", messageType)
	}
	if c.stopped.Load() || c.closing.Load() {
		return ErrClosed
	}
	return c.send(messageType, data, nil, len(data))
}

// ReadJSON reads the next message and decodes it as JSON into v (with
// go-json, as fx decodes bodies).
func (c *Conn) ReadJSON(v any) error {
	_, p, err := c.ReadMessage()
	if err != nil {
		return err
	}
	return json.Unmarshal(p, v)
}

// WriteJSON encodes v as JSON (go-json) and queues it as a text message.
func (c *Conn) WriteJSON(v any) error {
	p, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.WriteMessage(TextMessage, p)
}

// CloseError is the error ReadMessage returns once the peer has closed:
// Code is its close code (1000, 1001, ...), Text its reason.
type CloseError = ws.CloseError

// Close codes (RFC 6455, section 7.4.1) used by the package.
const (
	CloseNormalClosure   = ws.CloseNormalClosure           // 1000: the handler returned nil
	CloseGoingAway       = ws.CloseGoingAway               // 1001: Shutdown
	CloseProtocolError   = ws.CloseProtocolError           // 1002: the peer broke the protocol
	ClosePolicyViolation = ws.ClosePolicyViolation         // 1008: send queue full
	CloseInvalidPayload  = ws.CloseInvalidFramePayloadData // 1007: invalid UTF-8
	CloseMessageTooBig   = ws.CloseMessageTooBig           // 1009: over Config.ReadLimit
	CloseInternalError   = ws.CloseInternalServerErr       // 1011: a panic or an error not an *fx.Error
	closeAbnormal        = ws.CloseAbnormalClosure         // 1006: no close frame (for observation)
	closeErrorBase       = 4000                            // 4000 + status for an *fx.Error
)

// readFailed records why a read failed (the close that went on the
// wire, if any) and returns the error for the handler.
func (c *Conn) readFailed(err error) error {
	var ce *ws.CloseError
	switch {
	case errors.As(err, &ce):
		c.recordClose(ce.Code, ce.Text, true)
		c.shut() // the library answered the close; nothing more to send
	case errors.Is(err, ws.ErrReadLimit):
		// The library has sent the 1009 itself.
		c.recordClose(ws.CloseMessageTooBig, "message too big", false)
		c.shut()
	case errors.As(err, new(protocolError)):
		// A frame the library would take although the protocol forbids
		// it (sock.Read stopped before it): fx sends the 1002.
		c.closeWith(ws.CloseProtocolError, err.Error())
		return fmt.Errorf("%w: %v", ErrProtocol, err)
	case c.sk.sentCode == ws.CloseProtocolError:
		// The library found a protocol error and has sent its 1002.
		c.recordClose(ws.CloseProtocolError, c.sk.sentReason, false)
		c.shut()
		return fmt.Errorf("%w: %s", ErrProtocol, c.sk.sentReason)
	default:
		c.recordClose(closeAbnormal, "", true)
		c.shut()
	}
	return err
}

// extendRead pushes the dead-peer deadline forward after something was
// read, to PingInterval + PongTimeout from now, on the first read after
// each ping (pingNow sets pinged), not on every message: a deadline set
// is a timer update (1.7-2.2 µs on the loaded 2-core machine of
// docs/performance.md), and even deciding whether one is due took a
// clock read (50-200 ns there) against a few µs for a small message's
// whole round trip; a read between two pings costs one atomic load. The deadline so set is at most PingInterval +
// PongTimeout after the last thing read, and at least PongTimeout after
// the next ping (which comes PingInterval after the one before), so a
// peer that answers its pings is never dropped. It runs on the
// goroutine that reads.
func (c *Conn) extendRead() {
	if c.readSet && !c.pinged.Load() {
		return
	}
	if c.dropped.Load() {
		return // a dropped connection's read must keep failing
	}
	c.pinged.Store(false)
	c.readSet = true
	_ = c.ws.SetReadDeadline(time.Now().Add(c.cfg.PingInterval + c.cfg.PongTimeout))
}

// closeRecord is the close that ended a connection.
type closeRecord struct {
	code   int    // the close code
	reason string // its reason
	byPeer bool   // the peer closed, or vanished, first
}

// recordClose records the connection's close code and reason (byPeer:
// the peer closed, or vanished, first) unless a close was recorded
// before, and reports whether this one was the first. Cost: one
// allocation, once per connection; a later close is one failed
// compare-and-swap.
func (c *Conn) recordClose(code int, reason string, byPeer bool) (first bool) {
	if c.closed.Load() != nil {
		return false
	}
	return c.closed.CompareAndSwap(nil, &closeRecord{code: code, reason: reason, byPeer: byPeer})
}

// closeRecorded returns the close recorded (the zero record if none was).
func (c *Conn) closeRecorded() closeRecord {
	if r := c.closed.Load(); r != nil {
		return *r
	}
	return closeRecord{}
}

// closeWith sends the close frame code/reason now, unless a close was
// recorded first, and stops the writer. It is called on the goroutine
// that found the reason (the handler's read, the writer at Shutdown).
func (c *Conn) closeWith(code int, reason string) {
	if c.recordClose(code, reason, false) {
		c.sendControl(appendFrame(nil, ws.CloseMessage, closeMessage(code, reason)))
	}
	c.shut()
}

// withSocket runs f unless the socket was released (the connection's
// tear-down is over and fasthttp may have reclaimed it), and reports
// whether it ran. A close, a ping or a drop may come from another
// goroutine than the handler's at any moment of the tear-down.
func (c *Conn) withSocket(f func()) bool {
	c.sockMu.RLock()
	defer c.sockMu.RUnlock()
	if c.released {
		return false
	}
	f()
	return true
}

// shut stops the writer and every later write.
func (c *Conn) shut() {
	c.once.Do(func() {
		c.qmu.Lock()
		c.shutQ = true
		c.qmu.Unlock()
		c.stopped.Store(true)
	})
}

// isStopped reports whether the connection is being torn down.
func (c *Conn) isStopped() bool { return c.stopped.Load() }

// endLast closes last, once; qmu is held.
func (c *Conn) endLast() {
	if c.last != nil {
		select {
		case <-c.last:
		default:
			close(c.last)
		}
	}
}

// pingNow pings the peer (through the write side: a ping waits behind a
// frame begun) and sets the next ping; a failed write drops the peer. It
// runs on the timer's goroutine, PingInterval apart.
func (c *Conn) pingNow() {
	if c.isStopped() {
		return
	}
	c.pinged.Store(true) // the next read moves the dead-peer deadline
	c.sendControl(pingFrame)
	c.qmu.Lock()
	if !c.shutQ { // run stops the timer after shut: no Reset after that
		c.ping.Reset(c.cfg.PingInterval)
	}
	c.qmu.Unlock()
}

// pingFrame is a ping without payload (frames are never written to).
var pingFrame = []byte{0x80 | ws.PingMessage, 0}

// drop ends a connection whose peer cannot be written to: no close frame
// can be sent; the socket is closed so the handler's read fails at once.
func (c *Conn) drop() { c.dropWith(closeAbnormal, "") }

// dropWith records code and reason (unless a close came first), stops
// the writer and closes the socket, without writing: the peer is not
// reading.
func (c *Conn) dropWith(code int, reason string) {
	c.recordClose(code, reason, code == closeAbnormal)
	c.dropped.Store(true)
	c.shut()
	// Deadlines in the past end a blocked read or write at once; the
	// connection is closed once, when the handler's goroutine is done
	// with it (fx.Ctx.Hijack closes it then).
	c.withSocket(func() {
		_ = c.out.SetReadDeadline(pastDeadline)
		_ = c.out.SetWriteDeadline(pastDeadline)
	})
}

// run serves one upgraded connection: h, then its outcome as the close
// frame, then the tear-down, then the request's observation.
func (s *server) run(fc *fx.Ctx, reg *registry, wc *ws.Conn, sk *sock, end func(err error)) {
	cfg := &s.cfg
	c := &Conn{
		ctx: fc, ws: wc, sk: sk, cfg: cfg,
	}
	c.setWriteSide(sk.Conn)
	sk.c = c // from now on the library's frames go through the write side
	wc.SetReadLimit(cfg.ReadLimit)
	c.extendRead()
	wc.SetPongHandler(func(string) error { c.extendRead(); return nil })
	c.ping = time.AfterFunc(cfg.PingInterval, c.pingNow)
	if draining := reg.add(c); draining {
		c.goingAway() // Shutdown began after the upgrade: the sweep missed it
	}
	defer reg.done(c)

	panicked, err := s.call(c)
	code, reason := outcome(err, panicked)
	var failed error // the handler's failure, for the core's boundary (end)
	if code == ws.CloseInternalServerErr || code >= closeErrorBase {
		failed = err
	}
	c.closing.Store(true)
	if c.recordClose(code, reason, false) {
		c.finishQueue(closeMessage(code, reason))
	}
	c.shut()
	c.ping.Stop()
	c.awaitWriteSide()
	c.awaitClose()
	c.sockMu.Lock()
	c.released = true
	c.sockMu.Unlock()
	_ = wc.NetConn().Close()
	end(c.observe(fc, failed))
}

// call runs the handler, recovering a panic as an *fx.PanicError with its
// stack, as the core's chain does: the core's boundary logs it (end).
func (s *server) call(c *Conn) (panicked bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			panicked, err = true, &fx.PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return false, s.h(c)
}

// outcome maps the handler's result to the close frame.
func outcome(err error, panicked bool) (code int, reason string) {
	if err == nil {
		return ws.CloseNormalClosure, ""
	}
	var fe *fx.Error
	if !panicked && errors.As(err, &fe) && fe.Status >= 100 && fe.Status <= 999 {
		return closeErrorBase + fe.Status, fe.Code
	}
	var ce *ws.CloseError
	if !panicked && (errors.As(err, &ce) || errors.Is(err, ErrReadLimit) || errors.Is(err, ErrInvalidUTF8) ||
		errors.Is(err, ErrProtocol) ||
		errors.Is(err, ErrQueueFull) || errors.Is(err, ErrClosed) || isNetErr(err)) {
		return ws.CloseNormalClosure, "" // the read's own failure: already closed
	}
	return ws.CloseInternalServerErr, fx.ErrorCodes.InternalError
}

func isNetErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, net.ErrClosed)
}

// finishQueue queues the close frame behind what the handler queued and
// gives the writer WriteTimeout to send it all; past that (a peer that
// stopped reading), the peer is dropped.
func (c *Conn) finishQueue(closeMsg []byte) {
	c.qmu.Lock()
	if c.shutQ || c.closeQueued {
		c.qmu.Unlock()
		return // stopped: a failure or Shutdown already ended it
	}
	c.closeQueued = true
	c.last = make(chan struct{})
	last := c.last
	c.queue = append(c.queue, outMsg{typ: ws.CloseMessage, data: appendFrame(nil, ws.CloseMessage, closeMsg), framed: true})
	c.startWriter()
	c.qmu.Unlock()
	t := time.NewTimer(c.cfg.WriteTimeout)
	defer t.Stop()
	select {
	case <-last:
	case <-t.C:
		c.drop()
	}
}

// goingAway sends 1001 (Shutdown), unless a close came first, and stops
// the writer.
func (c *Conn) goingAway() { c.closeWith(ws.CloseGoingAway, "server shutting down") }

// awaitClose reads, within the read deadline sendClose set, until the
// peer answers the close frame or fails: the closing handshake.
func (c *Conn) awaitClose() {
	if c.closeRecorded().byPeer || c.dropped.Load() {
		return
	}
	_ = c.ws.SetReadDeadline(time.Now().Add(c.cfg.CloseTimeout))
	for {
		if _, _, err := c.ws.NextReader(); err != nil {
			return
		}
	}
}

// observe adds the connection's outcome to the request's log attributes
// and returns what the connection ended with, for the core's boundary
// (fx.Ctx.Detach's end), which gives the observers its code and logs it
// as any request's 5xx when its status is 500 or more: failed, the
// handler's panic or returned error that made the close frame (1011, or
// 4000 + an *fx.Error's status), whoever closed first; errPeerProtocol
// when the peer broke the protocol (fx sent the 1002: the client's
// error); nil otherwise (1000, 1001, a peer that left or was dropped).
func (c *Conn) observe(fc *fx.Ctx, failed error) error {
	cr := c.closeRecorded()
	code, reason, byPeer := cr.code, cr.reason, cr.byPeer
	fc.AddLogAttrs(
		slog.Int("ws_close_code", code),
		slog.String("ws_close_reason", reason),
		slog.Bool("ws_closed_by_peer", byPeer),
		slog.Int64("ws_messages_in", c.msgsIn),
		slog.Int64("ws_messages_out", c.msgsOut),
		slog.Int64("ws_bytes_in", c.bytesIn),
		slog.Int64("ws_bytes_out", c.bytesOut),
	)
	if failed != nil {
		return failed
	}
	if code == ws.CloseProtocolError && !byPeer {
		return errPeerProtocol
	}
	return nil
}

// errPeerProtocol is what a connection whose peer broke the protocol
// ended with (closed 1002 by fx): the client's error, FX_BAD_REQUEST to
// the observers, not logged.
var errPeerProtocol = fx.NewCatalogError(fx.ErrorCodes.BadRequest, "The peer broke the WebSocket protocol")

// maxCloseReason is the longest close reason a control frame holds: 125
// bytes of payload less the 2 of the code (RFC 6455, section 5.5).
const maxCloseReason = 123

// closeMessage is the payload of a close frame with code and reason, the
// reason cut at a UTF-8 boundary to fit the frame.
func closeMessage(code int, reason string) []byte {
	if len(reason) > maxCloseReason {
		cut := maxCloseReason
		for cut > 0 && !utf8.RuneStart(reason[cut]) {
			cut--
		}
		reason = reason[:cut]
	}
	return ws.FormatCloseMessage(code, reason)
}
