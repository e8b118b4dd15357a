package fx_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
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
	return upgrade(t, conn, "/hold/"+id, after)
}

// upgrade sends, on conn, an upgrade request for path followed at once,
// in the same write, by after, and reads the 101's head.
func upgrade(t testing.TB, conn net.Conn, path, after string) *bufio.Reader {
	t.Helper()
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	req := "GET " + path + " HTTP/1.1\r\nHost: fx\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n" + after
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

// Detach's end judges what the connection ended with as the error
// boundary judges a handler's returned error: nil is a success; an
// *fx.Error is its code, logged only at 500 or more; any other error is
// FX_INTERNAL_ERROR and a *fx.PanicError a panic, each logged with the
// one "fx: request failed" line (the original path, the request's log
// attributes, the panic's value under "panic"). Nothing more is written
// to the connection.
func TestDetachEndJudgesTheFailure(t *testing.T) {
	logs := &logBuffer{}
	app := fx.New(fx.Config{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		c.AddLogAttrs(slog.String("tenant", "acme"))
		return next()
	})
	failures := map[string]error{
		"ok":    nil,
		"gone":  fx.NewError(409, "APP_GONE", "gone"),
		"down":  fx.NewError(503, "APP_DOWN", "down"),
		"plain": errors.New("database down"),
		"panic": &fx.PanicError{Value: "boom", Stack: []byte("goroutine 1 [running]:\n")},
	}
	app.Get("/end/:how", func(c *fx.Ctx) error {
		end := c.Detach()
		c.RequestCtx().SetStatusCode(101)
		c.SetHeader("Upgrade", "test")
		c.SetHeader("Connection", "Upgrade")
		failure := failures[c.Param("how")]
		c.Hijack(func(net.Conn) { end(failure) })
		return nil
	})
	codes := make(chan string, 1)
	app.OnResponse(func(c *fx.Ctx) { codes <- c.ErrorCode() })
	addr := fxtest.Serve(t, app)

	for how, want := range map[string]struct{ code, logged string }{
		"ok":    {"", ""},
		"gone":  {"APP_GONE", ""},
		"down":  {"APP_DOWN", `"error":"APP_DOWN (503): down"`},
		"plain": {"FX_INTERNAL_ERROR", `"error":"database down"`},
		"panic": {"FX_INTERNAL_ERROR", `"panic":"boom","stack":"goroutine 1 [running]:\n"`},
	} {
		logs.Reset()
		br := upgrade(t, dialBounded(t, addr, 20*time.Second), "/end/"+how, "")
		if code := kittest.Within(t, codes, "the observation of /end/"+how); code != want.code {
			t.Errorf("%s: observed %q; want %q", how, code, want.code)
		}
		if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
			t.Errorf("%s: after the 101 the connection carried %q, %v; want nothing", how, rest, err)
		}
		lines := logs.Lines(`"msg":"fx: request failed"`)
		switch {
		case want.logged == "" && len(lines) != 0:
			t.Errorf("%s: logged %q; want nothing", how, lines)
		case want.logged != "" && (len(lines) != 1 || !strings.Contains(lines[0], want.logged) ||
			!strings.Contains(lines[0], `"path":"/end/`+how+`"`) || !strings.Contains(lines[0], `"tenant":"acme"`) ||
			!strings.Contains(lines[0], `"code":"`+want.code+`"`)):
			t.Errorf("%s: logged %q; want one failure line with %s", how, lines, want.logged)
		}
	}
}

// panicHandler is a slog handler that panics on every record.
type panicHandler struct{ slog.Handler }

func (panicHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (panicHandler) Handle(context.Context, slog.Record) error { panic("the log is broken") }

// When judging the connection's failure panics (here the logger), end
// still ends the request: the observers see it once, as
// FX_INTERNAL_ERROR, and the process lives on.
func TestDetachEndSurvivesAPanickingBoundary(t *testing.T) {
	app := fx.New(fx.Config{Logger: slog.New(panicHandler{})})
	app.Get("/end", func(c *fx.Ctx) error {
		end := c.Detach()
		c.RequestCtx().SetStatusCode(101)
		c.SetHeader("Upgrade", "test")
		c.SetHeader("Connection", "Upgrade")
		c.Hijack(func(net.Conn) { end(fx.NewError(503, "APP_DOWN", "down")) })
		return nil
	})
	codes := make(chan string, 2)
	app.OnResponse(func(c *fx.Ctx) { codes <- c.ErrorCode() })
	upgrade(t, dialBounded(t, fxtest.Serve(t, app), 20*time.Second), "/end", "")
	if code := kittest.Within(t, codes, "the observation"); code != "FX_INTERNAL_ERROR" {
		t.Errorf("observed %q; want FX_INTERNAL_ERROR", code)
	}
}
