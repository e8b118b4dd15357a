package fx_test

// Tests of the lifecycle: Serve, Shutdown, ShutdownWithContext and what
// each guarantees to requests in flight. The file runs past 600 lines
// because every test drives the same real listener through a shutdown and
// they are clearest side by side; the connection limits have their own
// file (server_test.go).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/valyala/fasthttp/fasthttputil"
)

// Shutdown is graceful: a request in flight when Shutdown is called
// finishes and its client gets the full response; OnShutdown functions run
// afterwards, in reverse registration order.
func TestShutdownGraceful(t *testing.T) {
	t.Parallel()
	app := quiet()
	entered := make(chan struct{})
	release := make(chan struct{})
	var ev events
	app.OnShutdown(func() error { ev.add("first"); return nil })
	app.OnShutdown(func() error { ev.add("second"); return nil })
	app.Get("/slow", func(c *fx.Ctx) error {
		close(entered)
		<-release
		return c.String(200, "finished")
	})
	ln := listenLoopback(t)
	served := serveOn(app, ln)

	got := getAsync("http://"+ln.Addr().String()+"/slow", 0)
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- app.Shutdown() }()
	// Wait (bounded) until Shutdown has closed the listener, then check it
	// is still waiting for the in-flight request. (Ordering, not timing:
	// the handler is released only after this check.)
	waitClosed(t, ln.Addr().String())
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) while a request was in flight", err)
	default:
	}
	if ev.String() != "" {
		t.Error("OnShutdown ran before the in-flight request finished")
	}
	close(release)
	if body := <-got; body != "finished" {
		t.Errorf("in-flight request got %q", body)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown = %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v", err)
	}
	if s := ev.String(); s != "second,first" {
		t.Errorf("OnShutdown order %q, want second,first", s)
	}
}

// ShutdownWithContext gives up when its context ends first, returning the
// context's error, and still runs OnShutdown.
func TestShutdownWithContextDeadline(t *testing.T) {
	app := quiet()
	ranShutdown := onShutdownRan(app, errors.New("closer failed"))
	entered := stuckRoute(t, app)
	ln := listenLoopback(t)
	go func() { _ = app.Serve(ln) }() // ends with Shutdown
	getAsync("http://"+ln.Addr().String()+"/stuck", 15*time.Second)
	<-entered
	err := shutdownOver(t, app) // Shutdown must not wait for /stuck
	if err == nil || !strings.Contains(err.Error(), "closer failed") {
		t.Errorf("OnShutdown error not joined: %v", err)
	}
	if !ranShutdown() {
		t.Error("OnShutdown did not run")
	}
}

// A connection whose request outlived a timed-out ShutdownWithContext is
// closed once that response is written: the response says Connection:
// close, and the connection serves nothing more (fasthttp leaves its
// shutdown state when it stops waiting, and would otherwise keep serving
// it after the OnShutdown functions closed what handlers use).
func TestShutdownWithContextClosesRemainingConnections(t *testing.T) {
	app := quiet()
	entered := make(chan struct{}, 2)
	release := make(chan struct{})
	app.Get("/stuck", func(c *fx.Ctx) error {
		entered <- struct{}{}
		<-release
		return c.String(200, "late")
	})
	ln := listenLoopback(t)
	go func() { _ = app.Serve(ln) }() // ends with Shutdown
	conn := dialBounded(t, ln.Addr().String(), 10*time.Second)
	defer conn.Close()
	br := bufio.NewReader(conn)
	const req = "GET /stuck HTTP/1.1\r\nHost: x\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	<-entered
	shutdownOver(t, app)
	close(release)
	r, err := readResult(br, "GET")
	if err != nil {
		t.Fatalf("in-flight response: %v", err)
	}
	if string(r.body) != "late" || !r.close {
		t.Errorf("in-flight response %q, Connection: close = %v; want \"late\", true", r.body, r.close)
	}
	_, _ = io.WriteString(conn, req) // may fail: the connection is closed
	if r, err := readResult(br, "GET"); err == nil {
		t.Errorf("connection served another request (%d) after shutdown", r.status)
	}
}

// Listen serves on an address and returns nil after Shutdown.
func TestListenAndShutdown(t *testing.T) {
	t.Parallel()
	probe := listenLoopback(t)
	addr := probe.Addr().String()
	probe.Close()

	app := quiet()
	app.Get("/", func(c *fx.Ctx) error { return c.String(200, "up") })
	done := make(chan error, 1)
	go func() { done <- app.Listen(addr) }()
	var resp *http.Response
	var err error
	for range 200 { // wait (bounded) until the listener is up
		if resp, err = http.Get("http://" + addr + "/"); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("Listen returned %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "up" {
		t.Errorf("body %q", b)
	}
	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("Listen = %v after Shutdown", err)
	}
}

// app.Test is safe for concurrent use and honours the request context.
func TestAppTestConcurrentAndContext(t *testing.T) {
	app := quiet()
	block := make(chan struct{})
	defer close(block)
	app.Get("/echo/:v", func(c *fx.Ctx) error { return c.String(200, c.Param("v")) })
	app.Get("/block", func(c *fx.Ctx) error { <-block; return nil })
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := strings.Repeat("v", i+1)
			if r := do(t, app, "GET", "/echo/"+v, ""); string(r.body) != v {
				t.Errorf("got %q want %q", r.body, v)
			}
		}()
	}
	wg.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://x/block", nil)
	errc := make(chan error, 1)
	go func() { _, err := app.Test(req); errc <- err }()
	cancel()
	if err := <-errc; err == nil {
		t.Error("Test of a blocked request returned no error after cancel")
	}
}

// events records the order in which things happened across goroutines.
type events struct {
	mu   sync.Mutex
	list []string
}

func (e *events) add(s string) { e.mu.Lock(); e.list = append(e.list, s); e.mu.Unlock() }

func (e *events) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.list, ",")
}

// waitClosed waits (bounded) until nothing accepts on addr any more.
func waitClosed(t *testing.T, addr string) {
	t.Helper()
	kittest.Eventually(t, "the listener stops accepting after Shutdown began", func() bool { return !accepts(addr) })
}

// Regression (Serve returns only when Shutdown has finished): Serve returned as soon as Shutdown began
// (fasthttp's Serve returns when its listener is closed), so a main
// running `log.Fatal(app.Listen(addr))` beside a signal handler exited
// with a request in flight: the response was cut off and OnShutdown never
// ran. Serve now returns only after the shutdown has completed: the
// in-flight response was written whole and its connection closed, and
// OnShutdown ran, in that order; and it returns nil.
func TestServeReturnsAfterShutdownCompletes(t *testing.T) {
	t.Parallel()
	app := quiet()
	var ev events
	entered := make(chan struct{})
	release := make(chan struct{})
	body := strings.Repeat("0123456789abcdef", 64<<10/16) // 64 KiB: several socket writes
	app.OnShutdown(func() error { ev.add("onshutdown"); return nil })
	app.Get("/slow", func(c *fx.Ctx) error {
		close(entered)
		<-release
		ev.add("handler")
		return c.String(200, body)
	})
	ln := listenLoopback(t)
	addr := ln.Addr().String()
	served := make(chan error, 1)
	go func() {
		err := app.Serve(ln)
		ev.add("serve")
		served <- err
	}()
	got := getAsync("http://"+addr+"/slow", 0)
	kittest.Within(t, entered, "the request never reached the handler")
	shut := make(chan error, 1)
	go func() { shut <- app.Shutdown() }()
	waitClosed(t, addr)
	// The listener is closed: fasthttp's Serve has returned or is about
	// to. Give a Serve that does not wait the chance to show it.
	select {
	case err := <-served:
		close(release)
		t.Fatalf("Serve returned (%v) while a request was in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := kittest.Within(t, served, "Serve did not return after Shutdown"); err != nil {
		t.Errorf("Serve = %v after a clean Shutdown, want nil", err)
	}
	if s := ev.String(); s != "handler,onshutdown,serve" {
		t.Errorf("order %q, want handler,onshutdown,serve", s)
	}
	if b := <-got; b != body {
		t.Errorf("in-flight response: got %d bytes (%.40q), want the full %d", len(b), b, len(body))
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown = %v", err)
	}
}

// When the shutdown is not clean, Serve returns the shutdown's error (so
// `log.Fatal(app.Listen(addr))` reports it), the same one Shutdown got.
func TestServeReturnsShutdownError(t *testing.T) {
	app := quiet()
	boom := errors.New("pool close failed")
	app.OnShutdown(func() error { return boom })
	app.Get("/", func(c *fx.Ctx) error { return c.String(200, "up") })
	ln := listenLoopback(t)
	served := serveOn(app, ln)
	if err := app.Shutdown(); !errors.Is(err, boom) {
		t.Errorf("Shutdown = %v, want %v", err, boom)
	}
	err := kittest.Within(t, served, "Serve did not return after Shutdown")
	if !errors.Is(err, boom) {
		t.Errorf("Serve = %v, want the shutdown's error %v", err, boom)
	}
	// A second Shutdown does not run OnShutdown again; it reports the
	// first's result.
	if err := app.Shutdown(); !errors.Is(err, boom) {
		t.Errorf("second Shutdown = %v, want the first's %v", err, boom)
	}
}

// Serve started after Shutdown serves nothing: it closes its listener and
// returns the shutdown's result, instead of serving a stopped App.
func TestServeAfterShutdown(t *testing.T) {
	app := quiet()
	app.Get("/", func(c *fx.Ctx) error { return c.String(200, "up") })
	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
	ln := listenLoopback(t)
	served := serveOn(app, ln)
	if err := kittest.Within(t, served, "Serve after Shutdown blocked"); err != nil {
		t.Errorf("Serve after Shutdown = %v, want nil", err)
	}
	if accepts(ln.Addr().String()) {
		t.Error("Serve after Shutdown left its listener open")
	}
}

// Serve racing Shutdown never hangs: a listener Serve has not handed to
// fasthttp yet when Shutdown closes fasthttp's listeners is closed too
// (without that, this hung within the first few hundred rounds).
func TestServeRacingShutdown(t *testing.T) {
	t.Parallel()
	for i := range 1000 {
		app := quiet()
		app.Get("/", func(c *fx.Ctx) error { return nil })
		_ = app.Boot()
		ln := listenLoopback(t)
		served := make(chan error, 1)
		shut := make(chan error, 1)
		go func() { served <- app.Serve(ln) }()
		go func() { shut <- app.Shutdown() }()
		for _, ch := range []chan error{served, shut} {
			if err := kittest.Within(t, ch, fmt.Sprintf("round %d: Serve or Shutdown hung", i)); err != nil {
				t.Errorf("round %d: %v", i, err)
			}
		}
	}
}

// When serving fails on its own, Serve returns the listener's error at
// once: it does not wait for a Shutdown that nobody may call, and does
// not shut the App down itself (OnShutdown has not run).
func TestServeListenerErrorReturns(t *testing.T) {
	app, ranShutdown, broken := brokenListener(t)
	served := make(chan error, 1)
	go func() { served <- app.Serve(broken) }()
	err := kittest.Within(t, served, "Serve blocked after its listener failed")
	if !errors.Is(err, broken.err) {
		t.Errorf("Serve = %v, want %v", err, broken.err)
	}
	if ranShutdown() {
		t.Error("a listener error ran OnShutdown")
	}
	if accepts(broken.Addr().String()) {
		t.Error("Serve left its failed listener open")
	}
	if err := app.Shutdown(); err != nil {
		t.Errorf("Shutdown = %v", err)
	}
	if !ranShutdown() {
		t.Error("Shutdown did not run OnShutdown")
	}
}

func TestShutdownCancelsContextAndWaitsForInFlight(t *testing.T) {
	t.Parallel()
	app := quiet()
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
	served := serveOn(app, ln)

	conn, br := dialMem(t, ln)
	got := make(chan result, 1)
	go func() {
		w, err := roundTripRawErr(conn, br, "GET", "GET /wait HTTP/1.1\r\nHost: a\r\n\r\n")
		conn.Close()
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

// Regression: fasthttp's shutdown counts each Serve still in its accept
// loop as an open connection and checks the count every 100 ms, so the
// Shutdown of an idle App serving a listener took a whole tick (100 ms
// per App, in every test's cleanup too). The shutdown now waits for the
// accept loops first and finds nothing open at the first check.
func TestIdleShutdownDoesNotPoll(t *testing.T) {
	apps := make([]*fx.App, 20)
	served := make([]<-chan error, len(apps))
	for i := range apps {
		apps[i] = quiet()
		apps[i].Get("/", func(c *fx.Ctx) error { return c.String(200, "x") })
		// In memory, the accept loop was always behind the first check
		// (over TCP, usually in time: then a loaded machine paid the tick).
		ln := fasthttputil.NewInmemoryListener()
		served[i] = serveOn(apps[i], ln)
		// one request on a connection its client closes: the App is idle
		c, br := dialMem(t, ln)
		if r, err := roundTripRawErr(c, br, "GET", "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"); err != nil || r.status != 200 {
			t.Fatalf("%d %v", r.status, err)
		}
		c.Close()
	}
	// The symptom, bounded loosely: 20 shutdowns took at least 2 s before.
	start := time.Now()
	for i, app := range apps {
		if err := app.Shutdown(); err != nil {
			t.Fatal(err)
		}
		if err := <-served[i]; err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("20 shutdowns of idle Apps serving a listener took %v", d)
	}
}

func TestShutdownWithRequestsInFlight(t *testing.T) {
	t.Parallel()
	// A connection that never sends a request holds Shutdown until fasthttp
	// counts it idle (5s after accept, as net/http) or ReadTimeout cuts it
	// off; a short ReadTimeout keeps this test quick.
	app := quiet(fx.Config{ReadTimeout: 300 * time.Millisecond})
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
	served := serveOn(app, ln)

	type res struct {
		i   int
		w   result
		err error
	}
	results := make(chan res, n)
	for i := range n {
		conn, br := dialMem(t, ln)
		go func() {
			w, err := roundTripRawErr(conn, br, "GET", fmt.Sprintf("GET /work/%d HTTP/1.1\r\nHost: a\r\n\r\n", i))
			conn.Close()
			results <- res{i, w, err}
		}()
	}
	// An idle keep-alive connection: Shutdown closes it without a response.
	idle, _ := dialMem(t, ln)
	entered.Wait()

	shut := make(chan error, 1)
	go func() { shut <- app.Shutdown() }()
	// New connections are refused once the listener is closed.
	kittest.Eventually(t, "the listener refuses connections during Shutdown", func() bool {
		c, err := ln.Dial()
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
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
	if _, err := checkWire(b, nil); err != nil {
		t.Fatalf("idle connection: %v", err)
	}
	<-served
}

// TestContextThenShutdownRace: c.Context() followed by Shutdown must not
// race (run under -race). Context derives from an App-owned context that
// ShutdownWithContext cancels; nothing reads fasthttp's server internals.
func TestContextThenShutdownRace(t *testing.T) {
	app := quiet()
	app.Get("/ctx", func(c *fx.Ctx) error {
		_ = c.Context()
		return c.JSON(200, "ok")
	})
	ln := fasthttputil.NewInmemoryListener()
	served := serveOn(app, ln)
	hammerConns(t, ln, 8, 20, func(int, int) string { return "GET /ctx HTTP/1.1\r\nHost: a\r\n\r\n" }, nil)
	_ = app.Shutdown()
	<-served
}

// uploadRoute registers POST /upload, which answers 200 "got N" (N the
// body's length) once the whole body has arrived.
func uploadRoute(app *fx.App) {
	app.Post("/upload", func(c *fx.Ctx) error {
		return c.String(200, fmt.Sprintf("got %d", len(c.Body())))
	})
}

// slowUpload sends POST /upload on conn announcing a body of announce
// bytes and sending send bytes of it in chunks 'gap' apart; signal runs
// (when not nil) after the chunk numbered at (from 0). It then reads the
// response and closes conn, as a client does after Connection: close.
func slowUpload(conn net.Conn, announce, send, chunks int, gap time.Duration, at int, signal func()) (result, time.Time, error) {
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n", announce); err != nil {
		return result{}, time.Time{}, err
	}
	for i, sent := 0, 0; i < chunks; i++ {
		n := send / chunks
		if i == chunks-1 {
			n = send - sent
		}
		if _, err := conn.Write(bytes.Repeat([]byte{'a'}, n)); err != nil {
			return result{}, time.Time{}, err
		}
		sent += n
		if i == at && signal != nil {
			signal()
		}
		time.Sleep(gap)
	}
	r, err := readResult(bufio.NewReader(conn), "POST")
	return r, time.Now(), err
}

// An upload in flight when the shutdown begins (its head read, its body
// still arriving) is read to the end and answered, with Connection: close;
// an upload whose body stops short of its Content-Length is answered 408
// FX_REQUEST_TIMEOUT, with Connection: close, before the shutdown's
// deadline, rather than left unanswered until the connection is closed at
// its end, and so is one too slow for the bound; and the shutdown then
// returns nil: every request was answered. Before, the short one got no
// byte back and the shutdown ended with its
// deadline (ReadTimeout, 10 s, was all that bounded the read).
func TestShutdownAnswersUploadsInFlight(t *testing.T) {
	t.Parallel()
	app := quiet()
	uploadRoute(app)
	ln := listenLoopback(t)
	served := serveOn(app, ln)
	const size, chunks, gap = 160 << 10, 10, 50 * time.Millisecond
	const bound = 1200 * time.Millisecond
	shut := make(chan error, 1)
	var deadline time.Time // set by begin, read once the uploads are answered
	begin := func() {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		deadline, _ = ctx.Deadline()
		go func() { defer cancel(); shut <- app.ShutdownWithContext(ctx) }()
	}
	type upload struct {
		r   result
		at  time.Time
		err error
	}
	whole, short := make(chan upload, 1), make(chan upload, 1)
	shortConn := dialBounded(t, ln.Addr().String(), 10*time.Second)
	wholeConn := dialBounded(t, ln.Addr().String(), 10*time.Second)
	go func() {
		r, at, err := slowUpload(shortConn, size+12, size, 2, gap, -1, nil)
		short <- upload{r, at, err}
	}()
	go func() {
		r, at, err := slowUpload(wholeConn, size, size, chunks, gap, 2, begin)
		whole <- upload{r, at, err}
	}()
	// An upload too slow for the bound, still sending when it is cut, is
	// answered 408 too.
	slowConn := dialBounded(t, ln.Addr().String(), 10*time.Second)
	defer slowConn.Close()
	if _, err := io.WriteString(slowConn, "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	stopTrickle := make(chan struct{})
	defer close(stopTrickle)
	go trickle(slowConn, strings.Repeat("b", 2<<10), stopTrickle)
	slow, slowErr := readResult(bufio.NewReader(slowConn), "POST")
	if slowErr != nil {
		t.Fatalf("the upload too slow for the bound got no answer: %v", slowErr)
	}
	wireEnvelope(t, slow, 408, "FX_REQUEST_TIMEOUT")
	slowConn.Close()
	w := <-whole
	if w.err != nil || w.r.status != 200 || string(w.r.body) != fmt.Sprintf("got %d", size) || !w.r.close {
		t.Errorf("the whole upload: %d %q close=%v, %v; want 200 \"got %d\" with Connection: close", w.r.status, w.r.body, w.r.close, w.err, size)
	}
	s := <-short
	if s.err != nil {
		t.Fatalf("the short upload got no answer: %v", s.err)
	}
	wireEnvelope(t, s.r, 408, "FX_REQUEST_TIMEOUT")
	if !s.r.close || !s.at.Before(deadline) {
		t.Errorf("the short upload's 408: Connection: close = %v, %v before the shutdown's deadline; want true and answered before it", s.r.close, deadline.Sub(s.at))
	}
	if err := <-shut; err != nil {
		t.Errorf("ShutdownWithContext = %v, want nil: every request was answered", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v", err)
	}
}
