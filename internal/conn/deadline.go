package conn

import (
	"errors"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Connection timeouts. fx's Config.ReadTimeout, WriteTimeout and
// IdleTimeout (Timeouts here) are enforced on each connection a Listener
// accepts, not by fasthttp.Server, whose own three timeouts App.Server
// leaves at zero.
// Given them, fasthttp reads the wall clock and moves a socket deadline
// three times per keep-alive request (the wait for the next request, the
// request's first byte, the response): three time.Now calls, ~55 ns each
// on a kvm-clock virtual machine, and three deadline updates, each a
// runtime timer moved under the socket's poll lock. That was what the
// timeouts cost fx against raw fasthttp and Fiber, which set none.
//
// timeoutConn follows the same three phases from the connection's own
// reads and writes:
//
//   - reading: from a request's first byte (a connection's first request:
//     from accept) until its response starts, bounded by ReadTimeout, so a
//     client trickling its headers or body (slow loris) is cut off;
//   - writing: from the response's first write until the connection waits
//     for the next request, bounded by WriteTimeout, so a client that
//     stops reading frees its connection;
//   - idle: from the first read after a response until the next request's
//     first byte, bounded by IdleTimeout (ReadTimeout when IdleTimeout is
//     disabled, as in fasthttp).
//
// A phase begins when Read or Write first sees it: the first Read after a
// response begins idle, a Read that returns bytes while idle begins
// reading, the first Write begins writing, unless it is an interim 1xx
// response (100 Continue), after which the request's body is still read
// within the reading phase. Pipelined responses written together share
// one WriteTimeout.
//
// The phase clock. Beginning a phase reads no clock: it loads the time of
// the last tick of phaseClock, a goroutine that stores the monotonic clock
// every phaseTick (10 ms) while any connection it times is open (a clock
// read is ~30 ns on a kvm-clock VM, and there are three per request). The
// start so read lags the real one by less than the gap to the next tick,
// and a deadline computed from it is early by as much; when
// such a deadline fires, the check (rearm) adds the longest gap between
// two ticks seen so far, or the time since the last tick if that is
// longer, and re-arms if that later bound is still ahead. A phase is
// therefore never cut before its timeout, and is cut at most about one
// tick after it, or, when the ticking goroutine was held up around its
// start, as much later as it was held up (phaseClock says for how long
// that is remembered). TLS connections, armed eagerly (below), read the
// precise clock instead.
//
// Lazy arming. A phase's deadline is only recorded when it is later than
// the one the socket has: the earlier one stays armed. When it fires, Read
// or Write sees the timeout, arms the deadline now wanted if that is
// later, and retries, so the caller never sees a timeout before the
// deadline of its phase; a deadline earlier than the armed one is armed at
// once, so none fires later than asked. Steady keep-alive traffic then
// costs, per connection, about one re-arm (and one read or write that
// fails at once on the expired deadline) every ReadTimeout and every
// WriteTimeout, instead of three deadline moves per request.
//
// Cost per keep-alive request: ~50 ns for the three phase changes (three
// atomic loads and three uncontended locks; ~140 ns when each read the
// clock), against ~0.54 µs for fasthttp's three clock reads and deadline
// moves on the same socket, on a 2-core VM (go test -run '^$' -bench
// Phases .). A disabled timeout reads no clock. The phase clock's
// goroutine wakes 100 times a second while connections are open, and not
// at all otherwise.
//
// TLS connections are not armed lazily: a tls.Conn whose write timed out
// is unusable afterwards, so an early timeout could not be retried. Each
// phase change arms the deadline there, as fasthttp did.
//
// Deadlines set from outside (RequestCtx.SetReadDeadline and
// SetWriteDeadline, Stream's per-flush write deadline) hold until the
// phase changes, and a write deadline set before the response holds for
// the whole writing phase, as fasthttp's handler deadlines do.
// SetDeadline hands the connection over for good: fasthttp calls it when
// a handler hijacks the connection, and a lingering close (linger.go)
// calls it too; from then on the caller's deadlines are the only ones.
// A fasthttp.Server served without a Listener (App.Server().Serve) has no
// timeouts unless its own fields are set.

// noDeadline is "no deadline" as a number: later than every deadline.
const noDeadline = math.MaxInt64

// clockBase is the origin of the monotonic nanoseconds deadlines are kept
// in (monoNow).
var clockBase = time.Now()

// monoNow is the monotonic clock in nanoseconds since clockBase.
func monoNow() int64 { return int64(time.Since(clockBase)) }

// phaseTick is the phase clock's period, in nanoseconds.
const phaseTick = int64(10 * time.Millisecond)

// phaseClock is the coarse clock phase starts are read from (see above):
// one goroutine stores monoNow every phaseTick while users > 0.
//
// How late a tick came is remembered for as long as a phase that began
// before it can still be checked: a gap is kept in gaps[0] until the
// window ends, then in gaps[1] for one more window, and the window is at
// least the longest timeout of any connection the clock has timed (a
// phase's deadline fires no later than its timeout after its start). So a
// held-up ticking goroutine (a saturated server, which a client can
// cause) delays the cuts of the phases it overlapped, and no later ones
// once two windows have passed.
type phaseClock struct {
	now  atomic.Int64    // monoNow at the last tick
	gaps [2]atomic.Int64 // the longest interval between two ticks in this window and the one before

	mu        sync.Mutex
	users     int           // connections timed by the clock
	stop      chan struct{} // closed when users drops to 0
	window    int64         // at least the longest timeout acquired with
	windowEnd int64         // when gaps moves on (monoNow)
}

// phases is the process's phase clock, shared by every Listener.
var phases phaseClock

// acquire counts a connection with timeouts up to longest in; the first
// starts the ticking, with now fresh before any connection reads it.
func (k *phaseClock) acquire(longest int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.window = max(k.window, longest)
	if k.users++; k.users == 1 {
		now := monoNow()
		k.now.Store(now)
		k.windowEnd = now + k.window
		k.stop = make(chan struct{})
		go k.tick(k.stop)
	}
}

// release counts a connection out; the last stops the ticking.
func (k *phaseClock) release() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.users--; k.users == 0 {
		close(k.stop)
	}
}

func (k *phaseClock) tick(stop chan struct{}) {
	t := time.NewTicker(time.Duration(phaseTick))
	defer t.Stop()
	for range t.C {
		if !k.step(stop) {
			return
		}
	}
}

// step is one tick of the goroutine that owns stop: now, and the gap
// since the last tick. It reports false, doing nothing, once stop is
// closed (a restarted clock has a new goroutine).
func (k *phaseClock) step(stop chan struct{}) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	select {
	case <-stop:
		return false
	default:
	}
	now := monoNow()
	if now >= k.windowEnd {
		k.gaps[1].Store(k.gaps[0].Load())
		k.gaps[0].Store(0)
		k.windowEnd = now + k.window
	}
	if gap := now - k.now.Load(); gap > k.gaps[0].Load() {
		k.gaps[0].Store(gap)
	}
	k.now.Store(now)
	return true
}

// lag bounds, at now, how far a phase start read from k trails the real
// one: less than the gap after the tick it read, which is among the gaps
// remembered (or at most a tick), or, for the latest tick, the time since
// it.
func (k *phaseClock) lag(now int64) int64 {
	return max(phaseTick, k.gaps[0].Load(), k.gaps[1].Load(), now-k.now.Load())
}

// deadlineNanos is t in clockBase nanoseconds; noDeadline for the zero t.
func deadlineNanos(t time.Time) int64 {
	if t.IsZero() {
		return noDeadline
	}
	return int64(t.Sub(clockBase))
}

// deadlineTime is the inverse of deadlineNanos.
func deadlineTime(n int64) time.Time {
	if n == noDeadline {
		return time.Time{}
	}
	return clockBase.Add(time.Duration(n))
}

// Timeouts are the phase bounds of a Listener's connections (see above):
// fx's Config.ReadTimeout, WriteTimeout and IdleTimeout. Zero or negative
// disables one; an Idle of zero or less is Read, as in fasthttp.
type Timeouts struct {
	Read, Write, Idle time.Duration
}

// connTimeouts are the phase bounds of a served connection in
// nanoseconds; 0 disables one. Shared by the connections of a listener,
// whose readsBy (nil outside a Listener) is the shutdown's bound on every
// read (EndReadsBy, drain.go): 0 until a shutdown sets it.
type connTimeouts struct {
	read, write, idle int64
	readsBy           *atomic.Int64
}

// readBound is the latest a read may wait until (clockBase ns), from
// EndReadsBy; noDeadline before a shutdown set one. Cost: a nil check and
// an atomic load.
func (l *connTimeouts) readBound() int64 {
	if l.readsBy != nil {
		if n := l.readsBy.Load(); n != 0 {
			return n
		}
	}
	return noDeadline
}

// limits is t as phase bounds.
func (t Timeouts) limits() connTimeouts {
	l := connTimeouts{read: int64(t.Read), write: int64(t.Write), idle: int64(t.Idle)}
	if l.idle <= 0 {
		l.idle = l.read // as fasthttp's Server.IdleTimeout
	}
	return l
}

// Phases of a served connection (timeoutConn.phase).
const (
	phaseReading uint8 = iota // a new connection starts here
	phaseWriting
	phaseIdle
)

// timeoutConn enforces the phase timeouts on a served connection (see
// above). Read and Write are called by the connection's serving goroutine
// (fasthttp's) until SetDeadline hands the connection over; the deadline
// setters may be called from any goroutine: the mutex orders them against
// the phase changes and the re-arm after a timeout, so that the armed
// deadline is never later than the wanted one.
type timeoutConn struct {
	net.Conn
	limits     *connTimeouts
	lazy       bool        // plain TCP; false for TLS
	clock      *phaseClock // phase starts are read from it; nil: from monoNow (TLS, or no timeouts)
	released   atomic.Bool // the clock was released (done)
	phase      uint8       // serving goroutine only
	handedOver atomic.Bool // set by SetDeadline: the phases are over

	mu        sync.Mutex
	rd, wd    deadlineState
	userWrite bool // a write deadline was set from outside since the last idle phase began
}

type deadlineState struct {
	want   int64 // the deadline asked for (clockBase ns); noDeadline for none
	armed  int64 // the deadline the socket has; noDeadline for none
	coarse bool  // want was computed from the phase clock: it may be early by the clock's lag
}

// newTimeoutConn wraps c, a connection just accepted, and arms its first
// request's read deadline (and, over TLS, a write deadline for the
// handshake, as fasthttp did). lazy is false for TLS connections.
func newTimeoutConn(c net.Conn, limits *connTimeouts, lazy bool) *timeoutConn {
	tc := &timeoutConn{Conn: c, limits: limits, lazy: lazy,
		rd: deadlineState{want: noDeadline, armed: noDeadline}, wd: deadlineState{want: noDeadline, armed: noDeadline}}
	if longest := max(limits.read, limits.write, limits.idle); lazy && longest > 0 {
		tc.clock = &phases
		tc.clock.acquire(longest)
	}
	if bound := limits.readBound(); limits.read > 0 || (!lazy && limits.write > 0) || bound != noDeadline {
		now := monoNow()
		tc.mu.Lock()
		_ = tc.setLocked(&tc.rd, true, min(phaseEnd(now, limits.read), bound))
		if !lazy {
			_ = tc.setLocked(&tc.wd, false, phaseEnd(now, limits.write))
		}
		tc.mu.Unlock()
	}
	return tc
}

// phaseEnd is the deadline of a phase begun at now and bounded by d (0:
// unbounded).
func phaseEnd(now, d int64) int64 {
	if d > 0 {
		return now + d
	}
	return noDeadline
}

// phaseFromNow is the deadline of a phase beginning now and bounded by d,
// from the phase clock when c has one; a disabled timeout reads no clock.
func (c *timeoutConn) phaseFromNow(d int64) int64 {
	switch {
	case d <= 0:
		return noDeadline
	case c.clock != nil:
		return c.clock.now.Load() + d
	}
	return monoNow() + d
}

// done releases c's phase clock, once; the connection's phases are over
// (it is closed, or handed to the lingering close).
func (c *timeoutConn) done() {
	if c.clock != nil && c.released.CompareAndSwap(false, true) {
		c.clock.release()
	}
}

// set records want as the deadline of one direction and arms it when it
// must be (setLocked).
func (c *timeoutConn) set(s *deadlineState, read bool, want int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.setLocked(s, read, want)
}

// setPhase is setLocked for a deadline from phaseFromNow; a read's is
// cut to the shutdown's bound on reads (readBound), which is precise.
func (c *timeoutConn) setPhase(s *deadlineState, read bool, want int64) error {
	if read {
		if bound := c.limits.readBound(); bound < want {
			return c.setLocked(s, read, bound)
		}
	}
	err := c.setLocked(s, read, want)
	s.coarse = c.clock != nil
	return err
}

// endReadsBy cuts the read deadline to n (clockBase ns) when it is later,
// waking a read blocked past it; a connection handed over keeps its own.
// Phases that begin later are cut by setPhase.
func (c *timeoutConn) endReadsBy(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.handedOver.Load() || c.rd.want <= n {
		return
	}
	_ = c.setLocked(&c.rd, true, n)
}

// setLocked records want and arms it when it must be: earlier than the
// armed deadline (lazy), or different from it (TLS). Cost when it need
// not: a store. An error arming surfaces on the Read or Write that
// follows, as a deadline the socket refused.
func (c *timeoutConn) setLocked(s *deadlineState, read bool, want int64) error {
	s.want, s.coarse = want, false
	if want == s.armed || (c.lazy && want > s.armed) {
		return nil // lazy: the armed deadline fires first; Read/Write re-arm then
	}
	s.armed = want
	return c.arm(read, want)
}

func (c *timeoutConn) arm(read bool, n int64) error {
	if read {
		return c.Conn.SetReadDeadline(deadlineTime(n))
	}
	return c.Conn.SetWriteDeadline(deadlineTime(n))
}

// rearm is called after err from a read or write: when err is a deadline
// that fired before the one wanted, it arms the wanted one and reports
// true (retry).
func (c *timeoutConn) rearm(s *deadlineState, read bool, err error) bool {
	if !c.lazy || !isTimeout(err) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	due := s.want
	if s.coarse && due != noDeadline {
		due += c.clock.lag(monoNow()) // never before the phase's real deadline
	}
	if due <= s.armed || (due != noDeadline && due <= monoNow()) {
		return false // the deadline asked for has passed: a real timeout
	}
	s.armed = due
	return c.arm(read, due) == nil
}

// isTimeout reports a deadline error: os.ErrDeadlineExceeded from a
// socket, or a net.Error with Timeout from an in-memory connection.
func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}

func (c *timeoutConn) Read(p []byte) (int, error) {
	if c.handedOver.Load() {
		return c.Conn.Read(p)
	}
	if c.phase == phaseWriting { // the response is out: wait for the next request
		c.phase = phaseIdle
		want := c.phaseFromNow(c.limits.idle)
		c.mu.Lock()
		c.userWrite = false
		_ = c.setPhase(&c.rd, true, want)
		c.mu.Unlock()
	}
	for {
		n, err := c.Conn.Read(p)
		if n > 0 {
			if c.phase == phaseIdle {
				c.phase = phaseReading
				want := c.phaseFromNow(c.limits.read)
				c.mu.Lock()
				_ = c.setPhase(&c.rd, true, want)
				c.mu.Unlock()
			}
			return n, err
		}
		if err == nil || !c.rearm(&c.rd, true, err) {
			return n, err
		}
	}
}

func (c *timeoutConn) Write(p []byte) (int, error) {
	if !c.handedOver.Load() && c.phase != phaseWriting {
		if !interimResponse(p) {
			c.phase = phaseWriting
		}
		want := c.phaseFromNow(c.limits.write)
		c.mu.Lock()
		if !c.userWrite {
			_ = c.setPhase(&c.wd, false, want)
		}
		c.mu.Unlock()
	}
	written := 0
	for {
		n, err := c.Conn.Write(p[written:])
		written += n
		if err == nil || !c.rearm(&c.wd, false, err) {
			return written, err
		}
	}
}

// interimResponse reports whether p starts with a 1xx status line
// ("HTTP/1.1 100 Continue"): the request it answers is still being read.
func interimResponse(p []byte) bool {
	return len(p) > 12 && p[8] == ' ' && p[9] == '1' && string(p[:5]) == "HTTP/"
}

// SetReadDeadline sets the read deadline until the phase changes.
func (c *timeoutConn) SetReadDeadline(t time.Time) error {
	if c.handedOver.Load() {
		return c.Conn.SetReadDeadline(t)
	}
	return c.set(&c.rd, true, min(deadlineNanos(t), c.limits.readBound()))
}

// SetWriteDeadline sets the write deadline until the next idle phase; the
// writing phase does not replace it.
func (c *timeoutConn) SetWriteDeadline(t time.Time) error {
	if c.handedOver.Load() {
		return c.Conn.SetWriteDeadline(t)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.userWrite = true
	return c.setLocked(&c.wd, false, deadlineNanos(t))
}

// SetDeadline hands the connection over (see above) and sets both
// deadlines on the socket.
func (c *timeoutConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handedOver.Store(true)
	n := deadlineNanos(t)
	c.rd = deadlineState{want: n, armed: n}
	c.wd = deadlineState{want: n, armed: n}
	return c.Conn.SetDeadline(t)
}

// CloseWrite half-closes the connection when the wrapped one can (the
// lingering close uses it, linger.go).
func (c *timeoutConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}
