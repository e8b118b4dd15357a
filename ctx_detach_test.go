package fx_test

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
)

// detachedEcho registers GET /hold/:id: a handler that detaches, answers
// 101 and hands the connection to serve, which gets the still valid Ctx
// and ends the request when it returns.
func detachedEcho(app *fx.App, serve func(c *fx.Ctx, conn net.Conn)) {
	app.Get("/hold/:id", func(c *fx.Ctx) error {
		end := c.Detach()
		c.RequestCtx().SetStatusCode(101)
		c.SetHeader("Upgrade", "test")
		c.SetHeader("Connection", "Upgrade")
		c.Hijack(func(conn net.Conn) {
			defer end(nil)
			serve(c, conn)
		})
		return nil
	})
}

// dialHold opens a connection to addr and holds /hold/id on it (hold).
func dialHold(t testing.TB, addr, id, after string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn := dialBounded(t, addr, 20*time.Second)
	return conn, hold(t, conn, id, after)
}

// hold sends, on conn, the request for /hold/id followed at once, in the
// same write, by after, and reads the 101's head.
func hold(t testing.TB, conn net.Conn, id, after string) *bufio.Reader {
	t.Helper()
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	req := "GET /hold/" + id + " HTTP/1.1\r\nHost: fx\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n" + after
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the 101: %v", err)
		}
		if line == "\r\n" {
			return br
		}
	}
}

// The handed-over connection starts with what the client sent after the
// request, which the server's read buffer already held, and the detached
// Ctx keeps its request (parameter, header, middleware value) while the
// connection runs and until the observers see it, once, at its end.
func TestHijackKeepsBufferedBytesAndTheRequest(t *testing.T) {
	app := fx.New()
	type who struct{}
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		c.SetValue(who{}, "alice")
		return next()
	})
	observed := make(chan string, 2)
	app.OnResponse(func(c *fx.Ctx) {
		observed <- c.Method() + " " + c.Route() + " " + c.Param("id") + " " + c.Header("Upgrade")
	})
	detachedEcho(app, func(c *fx.Ctx, conn net.Conn) {
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			line = "error: " + err.Error() + "\n"
		}
		runtime.GC() // fasthttp has recycled its request context by now: nothing of it may show
		user, _ := c.Value(who{}).(string)
		_, _ = io.WriteString(conn, c.Param("id")+" "+user+" "+c.Header("Upgrade")+" "+line)
	})
	addr := fxtest.Serve(t, app)

	conn, br := dialHold(t, addr, "42", "first\nsecond\n")
	got, err := br.ReadString('\n')
	if err != nil || got != "42 alice test first\n" {
		t.Fatalf("after the 101: %q %v", got, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("the connection is open after the handler returned: %v", err)
	}
	conn.Close()
	if got := kittest.Within(t, observed, "the detached request observed"); got != "GET /hold/:id 42 test" {
		t.Fatalf("observed %q, want \"GET /hold/:id 42 test\"", got)
	}
	select {
	case again := <-observed:
		t.Fatalf("observed twice, again as %q", again)
	default:
	}
}

// Over TLS the hand-over reads the decrypted bytes fasthttp buffered,
// then the TLS connection itself (a read past its deadline does not break
// it), the held Ctx still knows the request came over TLS, and the
// connection closes cleanly when the handler returns.
func TestHijackOverTLS(t *testing.T) {
	cert, pool, _, _ := selfSigned(t)
	app := fx.New(fx.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	detachedEcho(app, func(c *fx.Ctx, conn net.Conn) {
		br := bufio.NewReader(conn)
		for range 2 {
			line, err := br.ReadString('\n')
			if err != nil {
				line = "error: " + err.Error() + "\n"
			}
			scheme := "http"
			if c.RequestCtx().IsTLS() {
				scheme = "https"
			}
			_, _ = io.WriteString(conn, c.Param("id")+" "+scheme+" "+line)
		}
	})
	addr := serveTLS(t, app)
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	br := hold(t, conn, "7", "buffered\n")
	if got, err := br.ReadString('\n'); err != nil || got != "7 https buffered\n" {
		t.Fatalf("the line sent with the request: %q %v", got, err)
	}
	if _, err := io.WriteString(conn, "later\n"); err != nil {
		t.Fatal(err)
	}
	if got, err := br.ReadString('\n'); err != nil || got != "7 https later\n" {
		t.Fatalf("the line sent after the 101: %q %v", got, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("the connection is open after the handler returned: %v", err)
	}
}

// A hijacked connection does not keep the server's read buffer (as large
// as Config.HeaderLimit): with a 256 KiB limit, connections held open in
// their handlers cost a small fraction of it each.
func TestHijackedConnectionKeepsNoReadBuffer(t *testing.T) {
	const conns, limit = 64, 256 << 10
	app := fx.New(fx.Config{HeaderLimit: limit})
	release := make(chan struct{})
	held := make(chan struct{}, conns+1)
	detachedEcho(app, func(c *fx.Ctx, conn net.Conn) {
		held <- struct{}{}
		<-release
	})
	addr := fxtest.Serve(t, app)
	dialHold(t, addr, "warm", "") // the pools hold their first buffers before the count starts
	before := kittest.SettledHeap().HeapAlloc
	for i := range conns {
		dialHold(t, addr, string(rune('a'+i%26)), "")
	}
	for range conns + 1 {
		kittest.Within(t, held, "a hijacked connection handed to its handler")
	}
	after := kittest.SettledHeap().HeapAlloc
	per := (int64(after) - int64(before)) / conns
	close(release)
	if per > limit/4 {
		t.Fatalf("each held connection costs %d bytes of heap: the %d-byte read buffer is still held", per, limit)
	}
	t.Logf("heap per held connection: %d bytes", per)
}
