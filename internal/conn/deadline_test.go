package conn

import (
	"bufio"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// fx's default timeouts (fx.DefaultReadTimeout, DefaultWriteTimeout,
// DefaultIdleTimeout), which the benchmarks use.
const (
	defaultRead  = 10 * time.Second
	defaultWrite = 15 * time.Second
	defaultIdle  = 60 * time.Second
)

// instantConn answers Read and Write at once and passes deadlines on to
// the socket it embeds: a connection whose I/O costs nothing, so that a
// benchmark over it measures the deadline work alone.
type instantConn struct{ net.Conn }

func (instantConn) Read(p []byte) (int, error)  { return len(p), nil }
func (instantConn) Write(p []byte) (int, error) { return len(p), nil }

// tcpPair is a connected loopback TCP pair, closed at the end of the test.
func tcpPair(tb testing.TB) (cli, srv net.Conn) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	cli, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cli.Close() })
	srv, err = ln.Accept()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	return cli, srv
}

// BenchmarkPhases is the deadline work of one keep-alive request: the
// wait for it, its first byte, its response. "fasthttp" is what fasthttp
// does with its timeouts set (three clock reads, three deadline moves on
// the socket); "timeoutConn" is fx's phases (deadline.go) over the same
// socket; "none" is the I/O calls alone.
//
//	go test -run '^$' -bench Phases ./internal/conn
func BenchmarkPhases(b *testing.B) {
	_, srv := tcpPair(b)
	conn := instantConn{srv}
	buf := make([]byte, 64)
	limits := Timeouts{Read: defaultRead, Write: defaultWrite, Idle: defaultIdle}.limits()
	b.Run("none", func(b *testing.B) {
		for b.Loop() {
			_, _ = conn.Read(buf)
			_, _ = conn.Write(buf)
		}
	})
	b.Run("fasthttp", func(b *testing.B) {
		for b.Loop() {
			_ = conn.SetReadDeadline(time.Now().Add(defaultIdle))
			_, _ = conn.Read(buf)
			_ = conn.SetReadDeadline(time.Now().Add(defaultRead))
			_ = conn.SetWriteDeadline(time.Now().Add(defaultWrite))
			_, _ = conn.Write(buf)
		}
	})
	b.Run("timeoutConn", func(b *testing.B) {
		tc := newTimeoutConn(conn, &limits, true)
		defer tc.done()
		for b.Loop() {
			_, _ = tc.Read(buf)
			_, _ = tc.Write(buf)
		}
	})
}

// TestPhaseClockLagNeverCutsEarly: a phase start read from a phase clock
// whose last tick is old (its goroutine was held up) is early by that
// lag, and so is the deadline computed from it; the check when it fires
// adds the clock's lag, so the read still lasts its whole timeout. The
// clock here ticks only when the test says, 20 ms into the phase.
func TestPhaseClockLagNeverCutsEarly(t *testing.T) {
	cli, srv := tcpPair(t)

	const idle = 100 * time.Millisecond
	limits := connTimeouts{idle: int64(idle)}
	k := &phaseClock{window: int64(idle)}
	k.now.Store(monoNow() - int64(150*time.Millisecond)) // the last tick was 150 ms ago
	stop := make(chan struct{})
	tc := newTimeoutConn(srv, &limits, true)
	tc.clock = k // instead of the process's clock, which newTimeoutConn acquired
	defer phases.release()

	go func() { _, _ = cli.Read(make([]byte, 64)) }()
	if _, err := tc.Write([]byte("HTTP/1.1 200 OK\r\n\r\n")); err != nil { // a response: the next Read waits idle
		t.Fatal(err)
	}
	time.AfterFunc(20*time.Millisecond, func() { k.step(stop) }) // the clock catches up
	start := time.Now()
	_, err := tc.Read(make([]byte, 64))
	took := time.Since(start)
	if !isTimeout(err) {
		t.Fatalf("Read: %v, want the idle timeout", err)
	}
	if took < idle {
		t.Fatalf("the idle connection was cut after %v, before its IdleTimeout of %v", took, idle)
	}
	if took > idle+time.Second {
		t.Fatalf("the idle connection was cut after %v, long after its IdleTimeout of %v", took, idle)
	}
}

// TestPhaseClockForgetsOldGaps: a late tick widens the lag bound for as
// long as a phase that began before it can be checked (two windows of at
// least the longest timeout), and not for good: a stall a client caused
// once does not loosen every later timeout.
func TestPhaseClockForgetsOldGaps(t *testing.T) {
	const window = 30 * time.Millisecond
	k := &phaseClock{window: int64(window)}
	stop := make(chan struct{})
	k.now.Store(monoNow() - int64(300*time.Millisecond)) // the ticker was held up for 300 ms
	k.step(stop)
	if lag := k.lag(monoNow()); lag < int64(300*time.Millisecond) {
		t.Fatalf("lag after a 300 ms gap: %v, want at least the gap", time.Duration(lag))
	}
	for range 4 { // more than two windows of regular ticks
		time.Sleep(window)
		k.now.Store(monoNow())
		k.step(stop)
	}
	if lag := k.lag(monoNow()); lag >= int64(300*time.Millisecond) {
		t.Fatalf("lag two windows after a 300 ms gap: %v, want it forgotten", time.Duration(lag))
	}
	close(stop)
	if k.step(stop) {
		t.Fatal("step ran for a stopped clock")
	}
}

// TestPhaseClockRunsWhileConnectionsAreOpen: the phase clock ticks from
// the first timed connection accepted until the last is closed, and not
// for a TLS connection (armed from the precise clock) or a connection
// without timeouts.
func TestPhaseClockRunsWhileConnectionsAreOpen(t *testing.T) {
	users := func() int {
		phases.mu.Lock()
		defer phases.mu.Unlock()
		return phases.users
	}
	// Earlier tests' connections may still be closing (a lingering close
	// lasts up to lingerTimeout): start from a count that has settled.
	base := users()
	for settle := time.Now().Add(5 * time.Second); time.Now().Before(settle); {
		time.Sleep(50 * time.Millisecond)
		if now := users(); now != base {
			base = now
			continue
		}
		break
	}
	ln := serveLayer(t, Timeouts{Read: defaultRead, Write: defaultWrite, Idle: defaultIdle},
		func(rc *fasthttp.RequestCtx) { rc.SetBodyString("ok") })
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Read(make([]byte, 512)); err != nil {
		t.Fatal(err)
	}
	if got := users(); got != base+1 {
		t.Fatalf("phase clock users with one open connection: %d, want %d", got, base+1)
	}
	conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	for users() != base {
		if time.Now().After(deadline) {
			t.Fatalf("phase clock users after the connection closed: %d, want %d", users(), base)
		}
		time.Sleep(5 * time.Millisecond)
	}

	var limits connTimeouts // no timeouts
	if tc := newTimeoutConn(instantConn{}, &limits, true); tc.clock != nil {
		t.Error("a connection without timeouts holds the phase clock")
	}
	limits = Timeouts{Read: time.Second}.limits()
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	if tc := newTimeoutConn(c1, &limits, false); tc.clock != nil {
		t.Error("a TLS connection (armed eagerly) holds the phase clock")
	}
}

// countingListener counts the deadline moves that reach its connections'
// sockets.
type countingListener struct {
	net.Listener
	moves atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, moves: &l.moves}, nil
}

type countingConn struct {
	net.Conn
	moves *atomic.Int64
}

func (c *countingConn) SetReadDeadline(t time.Time) error {
	c.moves.Add(1)
	return c.Conn.SetReadDeadline(t)
}

func (c *countingConn) SetWriteDeadline(t time.Time) error {
	c.moves.Add(1)
	return c.Conn.SetWriteDeadline(t)
}

func (c *countingConn) SetDeadline(t time.Time) error {
	c.moves.Add(2)
	return c.Conn.SetDeadline(t)
}

// serveLayer serves h with a fasthttp.Server, as fx's App.Server does
// (fasthttp's own timeouts zero, the layer's Listener over a counting
// loopback listener, timeouts as given), until the test ends.
func serveLayer(t *testing.T, timeouts Timeouts, h fasthttp.RequestHandler) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	srv := &fasthttp.Server{Handler: h, CloseOnShutdown: true, Concurrency: FasthttpConcurrency(64)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(NewListener(cl, Config{Limit: 64, Timeouts: timeouts})) }()
	t.Cleanup(func() {
		_ = srv.Shutdown()
		<-served
	})
	return cl
}

// hello answers every request 200 "hello".
func hello(rc *fasthttp.RequestCtx) { rc.SetBodyString("hello") }

// dial connects to addr; the connection is closed when the test ends.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// getter returns a function that sends one GET on c, a keep-alive
// connection, and fails the test unless it is answered 200.
func getter(t *testing.T, c net.Conn) func() {
	br := bufio.NewReader(c)
	var resp fasthttp.Response
	return func() {
		t.Helper()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, "GET /hello HTTP/1.1\r\nHost: fx\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		if err := resp.Read(br); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != 200 {
			t.Fatalf("status %d", resp.StatusCode())
		}
	}
}

// Before deadline.go, fasthttp's three deadline moves per keep-alive
// request (idle, read, write) each reached the socket: 300 for 100
// requests. Now the moves that push a deadline later are recorded and
// armed when the earlier deadline fires.
func TestDeadlineMovesAreLazy(t *testing.T) {
	cl := serveLayer(t, Timeouts{Read: defaultRead, Write: defaultWrite, Idle: defaultIdle}, hello)
	get := getter(t, dial(t, cl.Addr().String()))
	const requests = 100
	for range requests {
		get()
	}
	if n := cl.moves.Load(); n > 10 {
		t.Fatalf("%d keep-alive requests moved the socket's deadlines %d times; want at most 10", requests, n)
	}
}

// A deadline armed early (the last request's ReadTimeout) fires while the
// connection idles within IdleTimeout: the connection must stay open and
// serve the next request.
func TestDeadlineLazyIdleOutlivesReadTimeout(t *testing.T) {
	t.Parallel()
	cl := serveLayer(t, Timeouts{Read: 50 * time.Millisecond, Write: defaultWrite, Idle: 5 * time.Second}, hello)
	get := getter(t, dial(t, cl.Addr().String()))
	for range 3 {
		get()
		time.Sleep(150 * time.Millisecond) // past ReadTimeout (and the phase clock's lag, a 10 ms tick), within IdleTimeout
	}
	get()
}

// A hijacked connection belongs to its hijack handler: none of the phase
// timeouts (deadline.go) applies to it any more. Here the client answers
// the hijack handler after three times every timeout.
func TestDeadlineHijackedConnHasNoTimeouts(t *testing.T) {
	t.Parallel()
	const timeout = 100 * time.Millisecond
	ln := serveLayer(t, Timeouts{Read: timeout, Write: timeout, Idle: timeout}, func(rc *fasthttp.RequestCtx) {
		rc.Hijack(func(conn net.Conn) {
			line, err := bufio.NewReader(conn).ReadString('\n')
			if err != nil {
				line = "error: " + err.Error() + "\n"
			}
			_, _ = io.WriteString(conn, line)
		})
		rc.SetBodyString("hijacked")
	})
	c := dial(t, ln.Addr().String())
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET /hijack HTTP/1.1\r\nHost: fx\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var resp fasthttp.Response
	if err := resp.Read(br); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode() != 200 || string(resp.Body()) != "hijacked" {
		t.Fatalf("hijacking request: %d %q", resp.StatusCode(), resp.Body())
	}
	time.Sleep(3 * timeout)
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := br.ReadString('\n'); line != "ping\n" {
		t.Fatalf("hijacked connection answered %q, %v; want the echo (no timeout after the hijack)", line, err)
	}
}
