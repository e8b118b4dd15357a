package fx_test

// Reliability tests of issue 8: faults, limits, leaks of internals, pooled
// context reuse under concurrency, goroutine leaks. Helpers prefixed "rel"
// live in fuzz_test.go and here.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp/fasthttputil"
)

// relServeMem serves app with app.Serve (the production path, listener
// wrapper included) on an in-memory listener, and shuts it down at the end
// of the test.
func relServeMem(t testing.TB, app *fx.App) *fasthttputil.InmemoryListener {
	t.Helper()
	ln := fasthttputil.NewInmemoryListener()
	served := make(chan error, 1)
	go func() { served <- app.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = app.ShutdownWithContext(ctx)
		<-served
	})
	return ln
}

// relRoundTrip writes raw on conn and reads one response to a request of
// the given method, body included, bounded by a generous deadline.
func relRoundTrip(t testing.TB, conn net.Conn, br *bufio.Reader, method, raw string) relWire {
	t.Helper()
	w, err := relRoundTripErr(conn, br, method, raw)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// relRoundTripErr is relRoundTrip for goroutines other than the test's.
func relRoundTripErr(conn net.Conn, br *bufio.Reader, method, raw string) (relWire, error) {
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if raw != "" {
		go func() { _, _ = conn.Write([]byte(raw)) }() // a refused write shows as a read error
	}
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		return relWire{}, fmt.Errorf("reading the response: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return relWire{}, fmt.Errorf("reading the body: %v", err)
	}
	return relWire{resp.StatusCode, resp.Header, body, resp.Close}, nil
}

// relMustEnvelope asserts w is an envelope with status and code.
func relMustEnvelope(t testing.TB, w relWire, status int, code string) relEnvelope {
	t.Helper()
	env, err := relCheckEnvelope(w.status, w.header, w.body, relAppCodes)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if w.status != status || env.Code != code {
		t.Fatalf("got %d %s, want %d %s: %q", w.status, env.Code, status, code, w.body)
	}
	return env
}

// relGet sends one request through app.Test.
func relGet(t testing.TB, app *fx.App, method, target, body string, hdr ...string) relWire {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := app.Test(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	b, _ := io.ReadAll(resp.Body)
	return relWire{resp.StatusCode, resp.Header, b, resp.Close}
}

func relLoggedApp(cfg fx.Config) (*fx.App, *logBuffer) {
	logs := &logBuffer{}
	cfg.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return fx.New(cfg), logs
}

// ---------------------------------------------------------------- faults

func TestRelHookThatPanicsFallsBackToTheOriginalEnvelope(t *testing.T) {
	app, logs := relLoggedApp(fx.Config{})
	app.OnError(func(c *fx.Ctx, err any) bool {
		c.SetHeader("X-Hook", "half-written")
		_ = c.JSON(299, map[string]string{"partial": "yes"})
		panic("hook exploded (internal text)")
	})
	app.Get("/typed", func(c *fx.Ctx) error { return relErrNope })
	app.Get("/plain", func(c *fx.Ctx) error { return errors.New("plain failure (internal text)") })
	app.Get("/panic", func(c *fx.Ctx) error { panic("handler panic (internal text)") })

	w := relGet(t, app, "GET", "/typed", "")
	env := relMustEnvelope(t, w, 409, "APP_NOPE")
	if env.Message != "Nope" || string(env.Details) != `{"why":"because"}` {
		t.Fatalf("original envelope not kept: %q", w.body)
	}
	if w.header.Get("X-Hook") != "" {
		t.Fatalf("the panicking hook's header leaked onto the response")
	}
	for _, p := range []string{"/plain", "/panic", "/missing"} {
		w := relGet(t, app, "GET", p, "")
		if p == "/missing" {
			relMustEnvelope(t, w, 404, fx.ErrorCodes.NotFound)
		} else {
			relMustEnvelope(t, w, 500, fx.ErrorCodes.InternalError)
		}
		if m := relLeaky(string(w.body)); m != "" {
			t.Fatalf("%s leaks %q: %q", p, m, w.body)
		}
	}
	if !strings.Contains(logs.String(), "hook exploded") {
		t.Fatalf("the hook's panic was not logged: %s", logs)
	}
}

func TestRelUndecodableDetails(t *testing.T) {
	cyc := &relCycle{Name: "c"}
	cyc.Next = cyc
	cases := map[string]any{
		"chan":           map[string]any{"ch": make(chan int)},
		"func":           []any{func() {}},
		"cycle":          cyc,
		"marshalPanic":   relBadJSON{Mode: "panic"},
		"marshalError":   relBadJSON{Mode: "error"},
		"marshalInvalid": relBadJSON{Mode: "invalid"},
		"nestedPanic":    map[string]any{"ok": 1, "bad": relBadJSON{Mode: "panic"}},
	}
	app, logs := relLoggedApp(fx.Config{})
	app.Get("/details/:case", func(c *fx.Ctx) error {
		return fx.NewError(400, "APP_BAD_DETAILS", "Bad details", cases[c.Param("case")])
	})
	app.Get("/json/:case", func(c *fx.Ctx) error { return c.JSON(200, cases[c.Param("case")]) })
	for name := range cases {
		t.Run(name, func(t *testing.T) {
			w := relGet(t, app, "GET", "/details/"+name, "")
			env, err := relCheckEnvelope(w.status, w.header, w.body, map[string]int{"APP_BAD_DETAILS": 400})
			if err != nil {
				t.Fatal(err)
			}
			if env.Code != "APP_BAD_DETAILS" || env.Message != "Bad details" {
				t.Fatalf("envelope changed: %q", w.body)
			}
			if env.HasDetails {
				t.Fatalf("undecodable details sent anyway: %s", env.Details)
			}
			if m := relLeaky(string(w.body)); m != "" {
				t.Fatalf("leaks %q: %q", m, w.body)
			}
			// c.JSON with the same value: the handler gets an error and
			// returns it, so the client gets the production 500.
			w = relGet(t, app, "GET", "/json/"+name, "")
			relMustEnvelope(t, w, 500, fx.ErrorCodes.InternalError)
		})
	}
	if !strings.Contains(logs.String(), "fx: error details") {
		t.Fatalf("undecodable details were not logged: %s", logs)
	}
}

func TestRelPartialResponseThenFailure(t *testing.T) {
	app := fx.New(fx.Config{Logger: relQuietLogger()})
	app.Get("/json-then-error", func(c *fx.Ctx) error {
		c.SetHeader("X-Request-Id", "r1")
		_ = c.JSON(200, map[string]string{"half": "written"})
		return errors.New("failed after writing (internal text)")
	})
	app.Get("/send-then-panic", func(c *fx.Ctx) error {
		_ = c.Send(200, "text/html", []byte("<html>partial"))
		c.RequestCtx().Response.Header.Set("Content-Encoding", "gzip")
		panic("after partial write (internal text)")
	})
	app.Get("/json-then-typed", func(c *fx.Ctx) error {
		_ = c.String(201, "created?")
		return relErrNope
	})
	for _, p := range []string{"/json-then-error", "/send-then-panic"} {
		w := relGet(t, app, "GET", p, "")
		relMustEnvelope(t, w, 500, fx.ErrorCodes.InternalError)
		if w.header.Get("Content-Encoding") != "" {
			t.Fatalf("%s: Content-Encoding of the partial response kept on the envelope", p)
		}
	}
	w := relGet(t, app, "GET", "/json-then-error", "")
	if w.header.Get("X-Request-Id") != "r1" {
		t.Fatalf("headers set before the failure should be kept (request IDs, CORS)")
	}
	relMustEnvelope(t, relGet(t, app, "GET", "/json-then-typed", ""), 409, "APP_NOPE")
}

func TestRelMiddlewareThatSwallowsAnError(t *testing.T) {
	// What is true: a middleware that calls next and drops its error owns
	// the response. fx does not resurrect the error; the client gets what
	// was written (here nothing: 200 with an empty body, or the handler's
	// partial write), never a half envelope or a non-JSON error body.
	app := fx.New(fx.Config{Logger: relQuietLogger()})
	var seen atomic.Value
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		err := next()
		if err != nil {
			seen.Store(fmt.Sprintf("%T", err))
		}
		if c.Header("X-Recover") == "json" {
			return c.JSON(503, map[string]string{"status": "degraded"})
		}
		return nil // swallowed
	})
	app.Get("/fail", func(c *fx.Ctx) error { return errors.New("swallowed (internal text)") })
	app.Get("/panic", func(c *fx.Ctx) error { panic("swallowed panic (internal text)") })
	app.Get("/partial", func(c *fx.Ctx) error {
		_ = c.JSON(200, map[string]int{"n": 1})
		return relErrNope
	})

	for _, p := range []string{"/fail", "/panic"} {
		w := relGet(t, app, "GET", p, "")
		if w.status != 200 || len(w.body) != 0 {
			t.Fatalf("%s: swallowed error gave %d %q, want 200 and no body", p, w.status, w.body)
		}
	}
	if got := seen.Load(); got != "*fx.PanicError" {
		t.Fatalf("middleware saw %v for a panic, want *fx.PanicError", got)
	}
	w := relGet(t, app, "GET", "/partial", "")
	if w.status != 200 || string(w.body) != `{"n":1}` {
		t.Fatalf("partial: %d %q", w.status, w.body)
	}
	w = relGet(t, app, "GET", "/fail", "", "X-Recover", "json")
	if w.status != 503 || string(w.body) != `{"status":"degraded"}` {
		t.Fatalf("middleware's own answer lost: %d %q", w.status, w.body)
	}
}

func TestRelHandlerOutlivesItsClient(t *testing.T) {
	// What is true: fasthttp does not watch the connection while the
	// handler runs, so c.Context() is NOT cancelled by a client
	// disconnecting; it is cancelled when the handler chain returns (so a
	// goroutine the handler started sees Done), or when the server shuts
	// down.
	app := fx.New(fx.Config{Logger: relQuietLogger()})
	entered := make(chan struct{})
	release := make(chan struct{})
	ctxs := make(chan context.Context, 1)
	doneDuring := make(chan bool, 1)
	app.Get("/slow", func(c *fx.Ctx) error {
		ctx := c.Context()
		ctxs <- ctx
		close(entered)
		<-release
		doneDuring <- ctx.Err() != nil
		return c.JSON(200, map[string]string{"late": "answer"})
	})
	app.Get("/ok", func(c *fx.Ctx) error { return c.JSON(200, "ok") })

	reqCtx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := app.Test(httptest.NewRequest("GET", "/slow", nil).WithContext(reqCtx))
		errc <- err
	}()
	<-entered
	cancel() // the client disconnects
	if err := <-errc; err == nil {
		t.Fatalf("the cancelled client got a response")
	}
	close(release)
	if <-doneDuring {
		t.Fatalf("c.Context() was cancelled by the disconnect; update the doc of Ctx.Context")
	}
	ctx := <-ctxs
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("c.Context() not done after the handler returned")
	}
	// The server is unharmed.
	if w := relGet(t, app, "GET", "/ok", ""); w.status != 200 {
		t.Fatalf("after a disconnect: %d %q", w.status, w.body)
	}
}

func TestRelShutdownCancelsContextAndWaitsForInFlight(t *testing.T) {
	app := fx.New(fx.Config{Logger: relQuietLogger()})
	entered := make(chan struct{})
	sawDone := make(chan struct{})
	app.Get("/wait", func(c *fx.Ctx) error {
		close(entered)
		<-c.Context().Done() // the server shuts down
		close(sawDone)
		return c.JSON(200, map[string]string{"finished": "yes"})
	})
	app.Get("/ok", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	ln := fasthttputil.NewInmemoryListener()
	served := make(chan error, 1)
	go func() { served <- app.Serve(ln) }()

	conn, err := ln.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	got := make(chan relWire, 1)
	go func() {
		w, err := relRoundTripErr(conn, br, "GET", "GET /wait HTTP/1.1\r\nHost: a\r\n\r\n")
		if err != nil {
			w.body = []byte(err.Error())
		}
		got <- w
	}()
	<-entered

	shut := make(chan error, 1)
	go func() { shut <- app.Shutdown() }()
	<-sawDone
	w := <-got
	if w.status != 200 || !strings.Contains(string(w.body), "finished") {
		t.Fatalf("in-flight request did not finish: %d %q", w.status, w.body)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if _, err := ln.Dial(); err == nil {
		t.Fatalf("a new connection was accepted after Shutdown")
	}
	<-served
}

func TestRelShutdownWithRequestsInFlight(t *testing.T) {
	// A connection that never sends a request holds Shutdown until fasthttp
	// counts it idle (5s after accept, as net/http) or ReadTimeout cuts it
	// off; a short ReadTimeout keeps this test quick.
	app := fx.New(fx.Config{Logger: relQuietLogger(), ReadTimeout: 300 * time.Millisecond})
	const n = 8
	var entered sync.WaitGroup
	entered.Add(n)
	release := make(chan struct{})
	app.Get("/work/:i", func(c *fx.Ctx) error {
		entered.Done()
		<-release
		return c.JSON(200, map[string]string{"i": c.Param("i")})
	})
	ln := fasthttputil.NewInmemoryListener()
	served := make(chan error, 1)
	go func() { served <- app.Serve(ln) }()

	type res struct {
		i   int
		w   relWire
		err error
	}
	results := make(chan res, n)
	for i := range n {
		conn, err := ln.Dial()
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		go func() {
			w, err := relRoundTripErr(conn, bufio.NewReader(conn), "GET", fmt.Sprintf("GET /work/%d HTTP/1.1\r\nHost: a\r\n\r\n", i))
			results <- res{i, w, err}
		}()
	}
	// An idle keep-alive connection: Shutdown closes it without a response.
	idle, err := ln.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	entered.Wait()

	shut := make(chan error, 1)
	go func() { shut <- app.Shutdown() }()
	// New connections are refused once the listener is closed.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := ln.Dial()
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("the listener still accepts during Shutdown")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) with requests in flight", err)
	default:
	}
	close(release)
	for range n {
		r := <-results
		if r.err != nil {
			t.Fatalf("in-flight %d: %v", r.i, r.err)
		}
		want := fmt.Sprintf(`{"i":"%d"}`, r.i)
		if r.w.status != 200 || string(r.w.body) != want {
			t.Fatalf("in-flight %d: %d %q", r.i, r.w.status, r.w.body)
		}
		if !r.w.close {
			t.Fatalf("in-flight response during Shutdown should close its connection")
		}
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	// The connection that never sent a request is closed; fasthttp may
	// first answer it (the read it was blocked in failed), and then it must
	// be an envelope.
	_ = idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(idle)
	if err != nil {
		t.Fatalf("idle connection not closed: %v", err)
	}
	if _, err := relCheckWire(b, nil); err != nil {
		t.Fatalf("idle connection: %v", err)
	}
	<-served
}

func TestRelPluginSetupPanics(t *testing.T) {
	app, logs := relLoggedApp(fx.Config{})
	app.Register(fx.Plugin{Name: "db", Setup: func(*fx.App) error {
		panic(&os.PathError{Op: "open", Path: "/etc/app/secret.pem", Err: os.ErrPermission})
	}})
	app.Register(fx.Plugin{Name: "api", DependsOn: []string{"db"}, Setup: func(a *fx.App) error {
		a.Get("/x", func(c *fx.Ctx) error { return nil })
		return nil
	}})
	var bootErr error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Boot let the Setup panic through: %v", r)
			}
		}()
		bootErr = app.Boot()
	}()
	var fe *fx.Error
	if !errors.As(bootErr, &fe) {
		t.Fatalf("boot error %v is not an *fx.Error", bootErr)
	}
	if !strings.Contains(bootErr.Error(), "secret.pem") {
		t.Fatalf("the boot error (for the operator) should name the cause: %v", bootErr)
	}
	if err := app.Listen("127.0.0.1:0"); err == nil {
		t.Fatalf("Listen started after a failed boot")
	}
	for _, p := range []string{"/x", "/"} {
		w := relGet(t, app, "GET", p, "")
		relMustEnvelope(t, w, 500, fx.ErrorCodes.InternalError)
	}
	if !strings.Contains(logs.String(), "secret.pem") {
		t.Fatalf("boot failure not logged")
	}
}

// ---------------------------------------------------------------- limits

func TestRelDefaultLimits(t *testing.T) {
	cfg := fx.New().Config()
	if cfg.BodyLimit != 4<<20 || cfg.HeaderLimit != 8<<10 || cfg.ReadTimeout != 10*time.Second ||
		cfg.WriteTimeout != 15*time.Second || cfg.IdleTimeout != 60*time.Second ||
		cfg.Concurrency <= 0 || cfg.Concurrency > 256*1024 { // clamped by RLIMIT_NOFILE: TestConnDefaultConcurrencyFollowsNofile

		t.Fatalf("defaults changed: %+v (update the docs in app.go and the README)", cfg)
	}
	srv := fx.New().Server()
	if srv.MaxRequestBodySize != cfg.BodyLimit || srv.ReadBufferSize != cfg.HeaderLimit ||
		srv.ReadTimeout != cfg.ReadTimeout || srv.WriteTimeout != cfg.WriteTimeout || srv.IdleTimeout != cfg.IdleTimeout {
		t.Fatalf("server does not apply the config: %+v", srv)
	}
	if srv.Concurrency <= cfg.Concurrency {
		t.Fatalf("fasthttp's own limit (%d) must stay above Config.Concurrency (%d), or its raw text 503 fires first",
			srv.Concurrency, cfg.Concurrency)
	}
	if srv.ErrorHandler == nil {
		t.Fatalf("no transport error handler")
	}
}

func TestRelBodyLimit(t *testing.T) {
	app := fx.New(fx.Config{Logger: relQuietLogger(), BodyLimit: 1024})
	app.Put("/echo", func(c *fx.Ctx) error { return c.Send(200, "application/octet-stream", c.Body()) })
	ln := relServeMem(t, app)
	for name, raw := range map[string]string{
		"content-length": "PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2048\r\n\r\n" + strings.Repeat("x", 2048),
		"chunked":        "PUT /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n" + strings.Repeat("x", 2048) + "\r\n0\r\n\r\n",
		"announced only": "PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := ln.Dial()
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			w := relRoundTrip(t, conn, bufio.NewReader(conn), "PUT", raw)
			relMustEnvelope(t, w, 413, fx.ErrorCodes.PayloadTooLarge)
		})
	}
	// At the limit it passes.
	w := relGet(t, app, "PUT", "/echo", strings.Repeat("y", 1024))
	if w.status != 200 || len(w.body) != 1024 {
		t.Fatalf("a body at the limit: %d, %d bytes", w.status, len(w.body))
	}
}

func TestRelHeaderLimit(t *testing.T) {
	app := fx.New(fx.Config{Logger: relQuietLogger(), HeaderLimit: 1024})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	ln := relServeMem(t, app)
	for name, raw := range map[string]string{
		"one big header": "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("b", 2048) + "\r\n\r\n",
		"many headers":   "GET / HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-H: 0123456789\r\n", 200) + "\r\n",
		"long URL":       "GET /" + strings.Repeat("u", 2048) + " HTTP/1.1\r\nHost: a\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := ln.Dial()
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			w := relRoundTrip(t, conn, bufio.NewReader(conn), "GET", raw)
			relMustEnvelope(t, w, 431, fx.ErrorCodes.HeadersTooLarge)
		})
	}
}

func TestRelSlowLorisIsCutOffByReadTimeout(t *testing.T) {
	app := fx.New(fx.Config{Logger: relQuietLogger(), ReadTimeout: 100 * time.Millisecond})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	ln := relServeMem(t, app)
	for name, part := range map[string]string{
		"trickled headers": "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n",
		"trickled body":    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n{\"a\":",
	} { // a client that sends nothing at all is closed quietly: TestConnSilentClientClosedQuietly

		t.Run(name, func(t *testing.T) {
			conn, err := ln.Dial()
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			// Keep trickling a byte at a time: the read timeout counts from
			// the first byte, not from the last.
			stop := make(chan struct{})
			defer close(stop)
			if part != "" {
				go func() {
					_, _ = conn.Write([]byte(part))
					for {
						select {
						case <-stop:
							return
						case <-time.After(20 * time.Millisecond):
							if _, err := conn.Write([]byte("X")); err != nil {
								return
							}
						}
					}
				}()
			}
			w := relRoundTrip(t, conn, br, "GET", "")
			relMustEnvelope(t, w, 408, fx.ErrorCodes.RequestTimeout)
			if !w.close {
				t.Fatalf("the slow client must be disconnected")
			}
			if _, err := br.ReadByte(); err == nil {
				t.Fatalf("the connection stayed open after the 408")
			}
		})
	}
}

func TestRelIdleTimeoutClosesKeepAliveQuietly(t *testing.T) {
	app := fx.New(fx.Config{Logger: relQuietLogger(), IdleTimeout: 50 * time.Millisecond})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	ln := relServeMem(t, app)
	conn, err := ln.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	if w := relRoundTrip(t, conn, br, "GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); w.status != 200 {
		t.Fatalf("first request: %d", w.status)
	}
	// No second request: the server closes the connection without writing
	// anything (no stray 408 on an idle keep-alive connection).
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	rest, err := io.ReadAll(br)
	if err != nil || len(rest) != 0 {
		t.Fatalf("idle connection: %q, %v; want a quiet close", rest, err)
	}
}

func TestRelWriteTimeoutFreesTheConnection(t *testing.T) {
	// Over TCP: an in-memory pipe buffers any amount, so a client that does
	// not read would never block the server there.
	app := fx.New(fx.Config{Logger: relQuietLogger(), WriteTimeout: 100 * time.Millisecond})
	big := bytes.Repeat([]byte("z"), 64<<20) // far more than loopback socket buffers hold
	app.Get("/big", func(c *fx.Ctx) error { return c.Send(200, "application/octet-stream", big) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback: %v", err)
	}
	go func() { _ = app.Serve(ln) }()
	defer app.Shutdown()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = conn.Write([]byte("GET /big HTTP/1.1\r\nHost: a\r\n\r\n"))
	// The client never reads. The server must give up and close.
	deadline := time.Now().Add(10 * time.Second)
	for app.Server().GetOpenConnectionsCount() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a client that does not read holds its connection past WriteTimeout")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRelOverConcurrencyAnswersWithEnvelope(t *testing.T) {
	app := fx.New(fx.Config{Logger: relQuietLogger(), Concurrency: 2})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	ln := relServeMem(t, app)

	var held []net.Conn
	for range 2 {
		c, err := ln.Dial()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Make sure each is accepted and served before the next.
		if w := relRoundTrip(t, c, bufio.NewReader(c), "GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); w.status != 200 {
			t.Fatalf("within the limit: %d", w.status)
		}
		held = append(held, c)
	}
	over, err := ln.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	w := relRoundTrip(t, over, bufio.NewReader(over), "GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	env := relMustEnvelope(t, w, 503, fx.ErrorCodes.ServiceUnavailable)
	if env.Message == "" || !w.close || w.header.Get("Retry-After") == "" {
		t.Fatalf("503: %v %q", w.header, w.body)
	}
	// The 503 is built once; a Date in it would be the process start time.
	if d := w.header.Get("Date"); d != "" {
		t.Errorf("prebuilt 503 carries a frozen Date: %s", d)
	}

	// Closing a held connection gives its slot back.
	held[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := ln.Dial()
		if err != nil {
			t.Fatal(err)
		}
		w := relRoundTrip(t, c, bufio.NewReader(c), "GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		c.Close()
		if w.status == 200 {
			break
		}
		relMustEnvelope(t, w, 503, fx.ErrorCodes.ServiceUnavailable)
		if time.Now().After(deadline) {
			t.Fatalf("the slot of a closed connection was never given back")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRelOverConcurrencyOverTCP(t *testing.T) {
	app := fx.New(fx.Config{Logger: relQuietLogger(), Concurrency: 1})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback: %v", err)
	}
	go func() { _ = app.Serve(ln) }()
	defer app.Shutdown()
	first, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if w := relRoundTrip(t, first, bufio.NewReader(first), "GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); w.status != 200 {
		t.Fatalf("first: %d", w.status)
	}
	// A real client (net/http) gets the 503 envelope, not a reset.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatalf("over the limit: %v (want the 503 envelope)", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	relMustEnvelope(t, relWire{resp.StatusCode, resp.Header, body, resp.Close}, 503, fx.ErrorCodes.ServiceUnavailable)
}

func TestRelMalformedRequestsGetEnvelopes(t *testing.T) {
	app := fx.New(fx.Config{Logger: relQuietLogger()})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	ln := relServeMem(t, app)
	for name, raw := range map[string]string{
		"bad header line":    "GET / HTTP/1.1\r\nHost: a\r\nno colon here\r\n\r\n",
		"bad chunk":          "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n",
		"bad content-length": "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n",
		"TLS hello":          "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := ln.Dial()
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			w := relRoundTrip(t, conn, bufio.NewReader(conn), "GET", raw)
			relMustEnvelope(t, w, 400, fx.ErrorCodes.BadRequest)
		})
	}
}

// ------------------------------------------------- no leaks of internals

// TestRelNoInternalsInProductionBodies provokes every failure mode the
// suite knows and checks that no response body carries a Go type name, a
// file path, a stack, "panic:" or an internal error's text.
func TestRelNoInternalsInProductionBodies(t *testing.T) {
	app := fx.New(fx.Config{Logger: relQuietLogger(), BodyLimit: 256, HeaderLimit: 2048})
	pathErr := &os.PathError{Op: "open", Path: "/srv/app/config.go", Err: os.ErrNotExist}
	cyc := &relCycle{Name: "c"}
	cyc.Next = cyc
	fails := map[string]func(c *fx.Ctx) error{
		"plain":       func(*fx.Ctx) error { return errors.New("dial tcp 10.0.0.1:5432: password=hunter2 (internal text)") },
		"wrapped":     func(*fx.Ctx) error { return fmt.Errorf("load: %w", pathErr) },
		"panicString": func(*fx.Ctx) error { panic("index out of range (internal text)") },
		"panicError":  func(*fx.Ctx) error { panic(pathErr) },
		"panicStruct": func(*fx.Ctx) error { panic(relItem{Name: "internal text"}) },
		"nilDeref":    func(*fx.Ctx) error { var p *relItem; _ = p.Name; return nil },
		//lint:ignore SA5000 the nil-map panic is the runtime error under test
		"runtimeError": func(*fx.Ctx) error { var m map[string]int; m["x"] = 1; return nil },
		"jsonChan":     func(c *fx.Ctx) error { return c.JSON(200, map[string]any{"c": make(chan int)}) },
		"jsonPanic":    func(c *fx.Ctx) error { return c.JSON(200, relBadJSON{Mode: "panic"}) },
		"jsonCycle":    func(c *fx.Ctx) error { return c.JSON(200, cyc) },
		"internalWithDetails": func(*fx.Ctx) error {
			return fx.NewError(500, fx.ErrorCodes.InternalError, "pq: relation users (internal text)", map[string]string{"sql": "SELECT (internal text)"})
		},
		"badDetails": func(*fx.Ctx) error { return fx.NewError(400, "APP_X", "Bad", relBadJSON{Mode: "error"}) },
		"body": func(c *fx.Ctx) error {
			_, err := fx.JSONBody[relItem](c)
			return err
		},
		"nextTwice": func(*fx.Ctx) error { return nil },
	}
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		switch c.Header("X-Mode") {
		case "mw-panic":
			panic(fmt.Errorf("middleware: %w", pathErr))
		case "next-twice":
			_ = next()
			return next()
		}
		return next()
	})
	app.OnError(func(c *fx.Ctx, err any) bool {
		if c.Header("X-Hook") == "panic" {
			panic(fmt.Sprintf("hook: %v (internal text)", err))
		}
		return false
	})
	for name, h := range fails {
		app.Post("/f/"+name, h)
	}
	ln := relServeMem(t, app)

	type probe struct{ name, raw string }
	var probes []probe
	for name := range fails {
		if name == "nextTwice" {
			continue // fails only with X-Mode: next-twice, below
		}
		for _, hook := range []string{"no", "panic"} {
			probes = append(probes, probe{name + " hook:" + hook, "POST /f/" + name + " HTTP/1.1\r\nHost: a\r\nX-Hook: " + hook +
				"\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{\"qty\":\"x\""})
		}
	}
	for _, body := range []string{`{"qty":"three"}`, `{"nested":{"ok":1}}`, `[1]`, `{"tags":{"a":1}}`, `{"attrs":[1]}`, `{`, `nul`, `{"qty":1e999}`} {
		probes = append(probes, probe{"body " + body, "POST /f/body HTTP/1.1\r\nHost: a\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body})
	}
	probes = append(probes,
		probe{"wrong content type", "POST /f/body HTTP/1.1\r\nHost: a\r\nContent-Type: text/xml\r\nContent-Length: 2\r\n\r\n{}"},
		probe{"mw-panic", "POST /f/plain HTTP/1.1\r\nHost: a\r\nX-Mode: mw-panic\r\nContent-Length: 0\r\n\r\n"},
		probe{"next-twice", "POST /f/nextTwice HTTP/1.1\r\nHost: a\r\nX-Mode: next-twice\r\nContent-Length: 0\r\n\r\n"},
		probe{"404", "GET /nope HTTP/1.1\r\nHost: a\r\n\r\n"},
		probe{"405 as 404", "DELETE /f/plain HTTP/1.1\r\nHost: a\r\n\r\n"},
		probe{"too large", "POST /f/body HTTP/1.1\r\nHost: a\r\nContent-Length: 999\r\n\r\n" + strings.Repeat("{", 999)},
		probe{"headers too large", "GET / HTTP/1.1\r\nHost: a\r\nX: " + strings.Repeat("h", 4096) + "\r\n\r\n"},
		probe{"malformed", "GET / HTTP/1.1\r\nbroken\r\n\r\n"},
		probe{"bad chunk", "POST /f/body HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nqq\r\n\r\n"},
	)
	for _, p := range probes {
		conn, err := ln.Dial()
		if err != nil {
			t.Fatal(err)
		}
		w := relRoundTrip(t, conn, bufio.NewReader(conn), "POST", p.raw)
		conn.Close()
		if w.status < 400 {
			t.Fatalf("%s: status %d", p.name, w.status)
		}
		if _, err := relCheckEnvelope(w.status, w.header, w.body, map[string]int{"APP_X": 400}); err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if m := relLeaky(string(w.body)); m != "" {
			t.Fatalf("%s: body leaks %q: %q", p.name, m, w.body)
		}
		for _, h := range []string{"Server", "X-Powered-By"} {
			if v := w.header.Get(h); v != "" {
				t.Fatalf("%s: header %s: %q reveals the stack", p.name, h, v)
			}
		}
	}
	// The boot-failure handler says nothing either.
	bad := fx.New(fx.Config{Logger: relQuietLogger()})
	bad.Get("no-slash/:a/:a", func(*fx.Ctx) error { return nil })
	bad.Register(fx.Plugin{Name: "p", Setup: func(*fx.App) error { return pathErr }})
	w := relGet(t, bad, "GET", "/", "")
	relMustEnvelope(t, w, 500, fx.ErrorCodes.InternalError)
	if m := relLeaky(string(w.body)); m != "" {
		t.Fatalf("failed boot leaks %q: %q", m, w.body)
	}
}

// ------------------------------------------------------------- race, leaks

type relKey struct{}

// TestRelConcurrentRequestsKeepTheirOwnData hammers one App from many
// goroutines over mixed routes; every response must carry its own
// request's data (a pooled Ctx or buffer reused too early would show
// another request's id). Run it with -race.
func TestRelConcurrentRequestsKeepTheirOwnData(t *testing.T) {
	app := fx.New(fx.Config{Logger: relQuietLogger()})
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		id := c.Header("X-Id")
		c.SetValue(relKey{}, id)
		c.SetHeader("X-Echo-Id", id)
		return next()
	})
	app.OnError(func(c *fx.Ctx, err any) bool {
		if fe, ok := err.(*fx.Error); ok && fe.Code == "APP_HOOKED" {
			return c.JSON(fe.Status, map[string]any{"hooked": c.Value(relKey{}), "path": c.Path()}) == nil
		}
		return false
	})
	app.Get("/p/:id", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]any{"id": c.Param("id"), "q": c.Query("q"), "v": c.Value(relKey{})})
	})
	app.Post("/b/:id", func(c *fx.Ctx) error {
		it, err := fx.JSONBody[relItem](c)
		if err != nil {
			return err
		}
		return c.JSON(200, map[string]any{"id": c.Param("id"), "name": it.Name, "v": c.Value(relKey{})})
	})
	app.Get("/e/:id", func(c *fx.Ctx) error {
		return fx.NewError(409, "APP_CONFLICT", "conflict "+c.Param("id"), map[string]any{"id": c.Param("id")})
	})
	app.Get("/x/:id", func(c *fx.Ctx) error {
		panic(fx.NewError(418, "APP_TEAPOT", "teapot "+c.Param("id")))
	})
	app.Get("/h/:id", func(c *fx.Ctx) error { return fx.NewError(400, "APP_HOOKED", "h") })
	app.Get("/ctx/:id", func(c *fx.Ctx) error {
		ctx := c.Context()
		c.SetValue("k", c.Param("id"))
		if ctx.Err() != nil {
			return errors.New("context done while the handler runs")
		}
		return c.JSON(200, map[string]any{"id": c.Value("k")})
	})

	workers, per := 16, 150
	if testing.Short() {
		per = 30
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				id := fmt.Sprintf("g%d-r%d-%s", g, i, strings.Repeat("x", (g*7+i)%40))
				if err := relHammerOne(app, i%6, id); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func relHammerOne(app *fx.App, kind int, id string) error {
	var req *http.Request
	var want func(status int, body map[string]any) bool
	switch kind {
	case 0:
		req = httptest.NewRequest("GET", "/p/"+id+"?q="+id, nil)
		want = func(s int, b map[string]any) bool { return s == 200 && b["id"] == id && b["q"] == id && b["v"] == id }
	case 1:
		req = httptest.NewRequest("POST", "/b/"+id, strings.NewReader(`{"name":"`+id+`"}`))
		want = func(s int, b map[string]any) bool {
			return s == 200 && b["id"] == id && b["name"] == id && b["v"] == id
		}
	case 2:
		req = httptest.NewRequest("GET", "/e/"+id, nil)
		want = func(s int, b map[string]any) bool {
			e, _ := b["error"].(map[string]any)
			d, _ := e["details"].(map[string]any)
			return s == 409 && e["message"] == "conflict "+id && d["id"] == id
		}
	case 3:
		req = httptest.NewRequest("GET", "/x/"+id, nil)
		want = func(s int, b map[string]any) bool {
			e, _ := b["error"].(map[string]any)
			return s == 418 && e["message"] == "teapot "+id
		}
	case 4:
		req = httptest.NewRequest("GET", "/h/"+id, nil)
		want = func(s int, b map[string]any) bool { return s == 400 && b["hooked"] == id && b["path"] == "/h/"+id }
	default:
		req = httptest.NewRequest("GET", "/ctx/"+id, nil)
		want = func(s int, b map[string]any) bool { return s == 200 && b["id"] == id }
	}
	req.Header.Set("X-Id", id)
	resp, err := app.Test(req)
	if err != nil {
		return err
	}
	raw, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		return fmt.Errorf("%s %s: not JSON: %q", req.Method, req.URL, raw)
	}
	if !want(resp.StatusCode, body) || resp.Header.Get("X-Echo-Id") != id {
		return fmt.Errorf("%s %s (id %s): got %d %q, X-Echo-Id %q: another request's data?",
			req.Method, req.URL, id, resp.StatusCode, raw, resp.Header.Get("X-Echo-Id"))
	}
	return nil
}

// TestRelContextThenShutdownRace: c.Context() followed by Shutdown must not
// race (run under -race). Context derives from an App-owned context that
// ShutdownWithContext cancels; nothing reads fasthttp's server internals.
func TestRelContextThenShutdownRace(t *testing.T) {
	app := fx.New(fx.Config{Logger: relQuietLogger()})
	app.Get("/ctx", func(c *fx.Ctx) error {
		_ = c.Context()
		return c.JSON(200, "ok")
	})
	ln := fasthttputil.NewInmemoryListener()
	served := make(chan error, 1)
	go func() { served <- app.Serve(ln) }()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := ln.Dial()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			for range 20 {
				if _, err := relRoundTripErr(conn, br, "GET", "GET /ctx HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	_ = app.Shutdown()
	<-served
}

// TestRelNoGoroutineLeak serves many mixed requests (including clients
// that disconnect mid-request) over the production Serve path, shuts
// down, and checks the goroutine count returns to where it was.
func TestRelNoGoroutineLeak(t *testing.T) {
	// Warm up process-wide goroutines (fasthttp's date ticker, ...).
	// fasthttp's worker-pool cleaner sleeps MaxIdleWorkerDuration (10s by
	// default) between rounds and notices Stop only after its sleep: it
	// lingers that long after Shutdown. Shorten it so the check is quick.
	const cleaner = 20 * time.Millisecond
	warm := fx.New(fx.Config{Logger: relQuietLogger()})
	warm.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	warm.Server().MaxIdleWorkerDuration = cleaner // Server boots: after registering
	relGet(t, warm, "GET", "/", "")
	_ = warm.Shutdown()
	base := relSettledGoroutines(-1)

	app := fx.New(fx.Config{Logger: relQuietLogger()})
	app.Get("/ok/:id", func(c *fx.Ctx) error { return c.JSON(200, c.Param("id")) })
	app.Get("/ctx", func(c *fx.Ctx) error {
		// c.Context() is left out here: see TestRelContextThenShutdownRace.
		c.SetValue("k", c.Param("id"))
		return nil
	})
	app.Get("/err", func(c *fx.Ctx) error { return relErrNope })
	app.Get("/panic", func(c *fx.Ctx) error { panic("p") })
	app.Server().MaxIdleWorkerDuration = cleaner
	ln := fasthttputil.NewInmemoryListener()
	served := make(chan error, 1)
	go func() { served <- app.Serve(ln) }()

	paths := []string{"/ok/1", "/ctx", "/err", "/panic", "/nope"}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := ln.Dial()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			for i := range 100 {
				if _, err := relRoundTripErr(conn, br, "GET", "GET "+paths[(g+i)%len(paths)]+" HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
					t.Error(err)
					return
				}
			}
			// Disconnect in the middle of a request.
			half, err := ln.Dial()
			if err == nil {
				_, _ = half.Write([]byte("GET /ok/1 HTTP/1.1\r\nHo"))
				half.Close()
			}
		}()
	}
	wg.Wait()
	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
	<-served
	if n := relSettledGoroutines(base); n > base {
		_, stacks := relServerGoroutines()
		t.Fatalf("%d fasthttp/fx goroutines after Shutdown, %d before:\n%s", n, base, stacks)
	}
}

// relServerGoroutines counts the goroutines that belong to fasthttp or fx
// (not the test's own), so that goroutines of unrelated code running in
// the same process do not disturb the check; it returns the count and the
// stacks.
func relServerGoroutines() (int, string) {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var n int
	var out strings.Builder
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "relServerGoroutines") { // the caller itself
			continue
		}
		if strings.Contains(g, "valyala/fasthttp") || strings.Contains(g, "github.com/fxhq/fx") {
			n++
			out.WriteString(g + "\n\n")
		}
	}
	return n, out.String()
}

// relSettledGoroutines waits (bounded) for the server goroutine count to
// fall to target or below and returns the last count; target < 0 means
// "until it stops changing".
func relSettledGoroutines(target int) int {
	n, _ := relServerGoroutines()
	for i := 0; i < 300; i++ {
		time.Sleep(10 * time.Millisecond)
		m, _ := relServerGoroutines()
		if target >= 0 && m <= target {
			return m
		}
		if target < 0 && m == n && i > 10 {
			return m
		}
		n = m
	}
	return n
}
