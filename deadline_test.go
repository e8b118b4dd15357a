package fx_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
)

const idleRequest = "GET /hello HTTP/1.1\r\nHost: fx\r\n\r\n"

// roundTrip sends one request on c and reads the whole response.
func roundTrip(c net.Conn, br *bufio.Reader) error {
	if _, err := io.WriteString(c, idleRequest); err != nil {
		return err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
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

// serveCounting serves app on a counting loopback listener until the test
// ends.
func serveCounting(t *testing.T, app *fx.App) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	served := make(chan error, 1)
	go func() { served <- app.Serve(cl) }()
	t.Cleanup(func() {
		_ = app.Shutdown()
		<-served
	})
	return cl
}

// keepAlive dials addr and returns a function that sends one GET /hello on
// the same connection and fails the test unless it is answered 200.
func keepAlive(t *testing.T, addr string) (net.Conn, func()) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	br := bufio.NewReader(c)
	return c, func() {
		t.Helper()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if err := roundTrip(c, br); err != nil {
			t.Fatal(err)
		}
	}
}

// Before deadline.go, fasthttp's three deadline moves per keep-alive
// request (idle, read, write) each reached the socket: 300 for 100
// requests. Now the moves that push a deadline later are recorded and
// armed when the earlier deadline fires.
func TestDeadlineMovesAreLazy(t *testing.T) {
	app := quiet()
	app.Get("/hello", func(c *fx.Ctx) error { return c.JSON(200, "hello") })
	cl := serveCounting(t, app)
	_, get := keepAlive(t, cl.Addr().String())
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
	app := quiet(fx.Config{ReadTimeout: 150 * time.Millisecond, IdleTimeout: 5 * time.Second})
	app.Get("/hello", func(c *fx.Ctx) error { return c.JSON(200, "hello") })
	cl := serveCounting(t, app)
	_, get := keepAlive(t, cl.Addr().String())
	for range 3 {
		get()
		time.Sleep(400 * time.Millisecond) // past ReadTimeout, within IdleTimeout
	}
	get()
}

// A slow client on a connection that served fast requests before (so
// later deadlines were only recorded) is still cut off ReadTimeout after
// its request's first byte, with the 408 envelope, and the idle timeout
// still closes a quiet connection.
func TestDeadlineLazyStillBounds(t *testing.T) {
	t.Parallel()
	const readTimeout, idleTimeout = 300 * time.Millisecond, 300 * time.Millisecond
	app := quiet(fx.Config{ReadTimeout: readTimeout, IdleTimeout: idleTimeout})
	app.Get("/hello", func(c *fx.Ctx) error { return c.JSON(200, "hello") })
	cl := serveCounting(t, app)

	c, get := keepAlive(t, cl.Addr().String())
	for range 20 {
		get()
	}
	// Trickle a request head, one byte every 50 ms, for up to 5 s.
	start := time.Now()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(c)
		got <- string(b)
	}()
	head := "GET /hello HTTP/1.1\r\nHost: fx\r\nX-Slow: " + strings.Repeat("a", 100)
	for i := 0; i < len(head) && time.Since(start) < 5*time.Second; i++ {
		if _, err := c.Write([]byte{head[i]}); err != nil {
			break // cut off
		}
		select {
		case resp := <-got:
			got <- resp
			i = len(head)
		case <-time.After(50 * time.Millisecond):
		}
	}
	resp := <-got
	elapsed := time.Since(start)
	if !strings.HasPrefix(resp, "HTTP/1.1 408") || !strings.Contains(resp, fx.ErrorCodes.RequestTimeout) {
		t.Fatalf("slow request after fast ones: got %q, want a 408 %s", resp, fx.ErrorCodes.RequestTimeout)
	}
	if elapsed < readTimeout || elapsed > readTimeout+2*time.Second {
		t.Fatalf("slow request cut off after %v; want ReadTimeout (%v) after its first byte, within 2s", elapsed, readTimeout)
	}

	// Idle: a connection that served requests and then says nothing is
	// closed IdleTimeout later.
	c2, get2 := keepAlive(t, cl.Addr().String())
	for range 20 {
		get2()
	}
	start = time.Now()
	_ = c2.SetDeadline(time.Now().Add(10 * time.Second))
	n, err := c2.Read(make([]byte, 1))
	elapsed = time.Since(start)
	if n != 0 || err != io.EOF {
		t.Fatalf("idle connection: read %d bytes, %v; want EOF (closed by the server)", n, err)
	}
	if elapsed > idleTimeout+2*time.Second {
		t.Fatalf("idle connection closed after %v; want IdleTimeout (%v), within 2s", elapsed, idleTimeout)
	}
}

// A hijacked connection belongs to its hijack handler: none of the phase
// timeouts (deadline.go) applies to it any more. Here the client answers
// the hijack handler after three times every timeout.
func TestDeadlineHijackedConnHasNoTimeouts(t *testing.T) {
	t.Parallel()
	const timeout = 100 * time.Millisecond
	app := quiet(fx.Config{ReadTimeout: timeout, WriteTimeout: timeout, IdleTimeout: timeout})
	app.Get("/hijack", func(c *fx.Ctx) error {
		c.RequestCtx().Hijack(func(conn net.Conn) {
			line, err := bufio.NewReader(conn).ReadString('\n')
			if err != nil {
				line = "error: " + err.Error() + "\n"
			}
			_, _ = io.WriteString(conn, line)
		})
		return c.String(200, "hijacked")
	})
	c, err := net.Dial("tcp", serveLocal(t, app))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET /hijack HTTP/1.1\r\nHost: fx\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "hijacked" {
		t.Fatalf("hijacking request: %d %q", resp.StatusCode, body)
	}
	time.Sleep(3 * timeout)
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := br.ReadString('\n'); line != "ping\n" {
		t.Fatalf("hijacked connection answered %q, %v; want the echo (no timeout after the hijack)", line, err)
	}
}

// A 100 Continue is an interim response: the request's body is still read
// within ReadTimeout from the request's first byte, not given a fresh
// idle wait as after a final response.
func TestDeadlineInterimResponseKeepsReadTimeout(t *testing.T) {
	t.Parallel()
	const readTimeout = 200 * time.Millisecond
	app := quiet(fx.Config{ReadTimeout: readTimeout, IdleTimeout: 20 * time.Second})
	app.Post("/echo", func(c *fx.Ctx) error { return c.Send(200, "text/plain", c.Body()) })
	c, err := net.Dial("tcp", serveLocal(t, app))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	if _, err := io.WriteString(c, "POST /echo HTTP/1.1\r\nHost: fx\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	interim, err := http.ReadResponse(br, nil)
	if err != nil || interim.StatusCode != 100 {
		t.Fatalf("interim response: %v %v", interim, err)
	}
	// The body never comes.
	resp, err := http.ReadResponse(br, nil)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("no response after the 100 Continue within %v: %v", elapsed, err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 408 || !strings.Contains(string(body), fx.ErrorCodes.RequestTimeout) {
		t.Fatalf("body never sent: %d %q; want the 408 envelope", resp.StatusCode, body)
	}
	if elapsed > readTimeout+2*time.Second {
		t.Fatalf("cut off after %v; want ReadTimeout (%v) from the request's first byte, within 2s", elapsed, readTimeout)
	}
}
