package fx_test

import (
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
)

// Regression: App.Test served an in-memory listener with fasthttp's Serve,
// and fasthttp's Shutdown polls its open-connection count every 100 ms,
// a count in which that Serve goroutine still was: every test's
// app.Shutdown() took ~100 ms. Test now leaves nothing running, and
// Shutdown waits for in-memory exchanges on a channel.
func TestShutdownAfterTestDoesNotPoll(t *testing.T) {
	warm := quiet()
	warm.Get("/", func(c *fx.Ctx) error { return c.String(200, "x") })
	do(t, warm, "GET", "/", "") // starts fasthttp's process-wide helpers once
	warm.Shutdown()

	before := runtime.NumGoroutine()
	apps := make([]*fx.App, 20)
	for i := range apps {
		apps[i] = quiet()
		apps[i].Get("/", func(c *fx.Ctx) error { return c.String(200, "x") })
		if r := do(t, apps[i], "GET", "/", ""); r.status != 200 {
			t.Fatalf("status %d", r.status)
		}
	}
	// The mechanism: nothing is left serving after Test returned (the old
	// in-memory listener kept one Serve goroutine per App).
	if after := runtime.NumGoroutine(); after > before+2 {
		t.Errorf("%d goroutines before 20 app.Test calls, %d after", before, after)
	}
	// The symptom, bounded loosely: 20 shutdowns took at least 2 s before.
	start := time.Now()
	for _, app := range apps {
		if err := app.Shutdown(); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("20 shutdowns after app.Test took %v", d)
	}
}

// Shutdown waits for an in-memory exchange in flight, like for a request
// on a served listener; with its context already over, it returns the
// context's error instead of waiting.
func TestShutdownWaitsForInMemoryExchanges(t *testing.T) {
	app := quiet()
	entered := make(chan struct{})
	release := make(chan struct{})
	app.Get("/slow", func(c *fx.Ctx) error {
		close(entered)
		<-release
		return c.String(200, "done")
	})
	got := make(chan string, 1)
	go func() {
		r := do(t, app, "GET", "/slow", "")
		got <- string(r.body)
	}()
	<-entered
	shutdownOver(t, app) // an exchange in flight
	close(release)
	if b := <-got; b != "done" {
		t.Fatalf("in-flight exchange got %q", b)
	}
	// After Shutdown, exchanges are refused like connections to a closed
	// listener.
	if _, err := app.Test(httptest.NewRequest("GET", "/slow", nil)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("app.Test after Shutdown: %v, want net.ErrClosed", err)
	}
	if _, err := app.TestRaw(nil, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("TestRaw after Shutdown: %v, want net.ErrClosed", err)
	}
}

// Shutdown without a bound waits for the exchange in flight to finish
// before it runs the OnShutdown functions, and returns nil.
func TestShutdownWaitsForExchangeThenCloses(t *testing.T) {
	app := quiet()
	var ev events
	entered := make(chan struct{})
	release := make(chan struct{})
	app.OnShutdown(func() error { ev.add("onshutdown"); return nil })
	app.Get("/slow", func(c *fx.Ctx) error {
		close(entered)
		<-release
		ev.add("handler")
		return c.String(200, "done")
	})
	got := make(chan string, 1)
	go func() { got <- string(do(t, app, "GET", "/slow", "").body) }()
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- app.Shutdown() }()
	for { // until the shutdown has begun: new exchanges are refused
		if _, err := app.TestRaw(nil, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			break
		}
		runtime.Gosched()
	}
	close(release)
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	if b := <-got; b != "done" {
		t.Fatalf("in-flight exchange got %q", b)
	}
	if ev.String() != "handler,onshutdown" {
		t.Fatalf("order %q, want handler,onshutdown", ev.String())
	}
}

// TestRaw goes through fasthttp's parsing: malformed input is answered with
// the envelope, pipelined requests in order, and the client address is the
// documented one.
func TestTestRaw(t *testing.T) {
	app := quiet(fx.Config{BodyLimit: 16})
	app.Get("/ip", func(c *fx.Ctx) error { return c.String(200, c.RequestCtx().RemoteAddr().String()) })
	app.Post("/echo", func(c *fx.Ctx) error { return c.String(200, string(c.RequestCtx().PostBody())) })
	t.Cleanup(func() { app.Shutdown() })

	out, err := app.TestRaw(nil, []byte("GET /ip HTTP/1.1\r\nHost: x\r\n\r\nPOST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if i, j := strings.Index(s, "192.0.2.1:1234"), strings.LastIndex(s, "\r\n\r\nhi"); i < 0 || j < i {
		t.Fatalf("pipelined responses:\n%s", s)
	}
	out, err = app.TestRaw(out[:0], []byte("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n01234567890123456"))
	if err != nil || !strings.Contains(string(out), fx.ErrorCodes.PayloadTooLarge) {
		t.Fatalf("over the body limit: %v\n%s", err, out)
	}
	out, err = app.TestRaw(nil, []byte("GET /<x>\x01 HTTP/1.1 junk\r\n\r\n"))
	if err != nil || !strings.HasPrefix(string(out), "HTTP/1.1 400") || !strings.Contains(string(out), fx.ErrorCodes.BadRequest) {
		t.Fatalf("malformed: %v\n%s", err, out)
	}
}

// app.Test passes the request's RemoteAddr on to the server.
func TestAppTestRemoteAddr(t *testing.T) {
	app := quiet()
	app.Get("/ip", func(c *fx.Ctx) error { return c.String(200, c.RequestCtx().RemoteIP().String()) })
	t.Cleanup(func() { app.Shutdown() })
	req := httptest.NewRequest("GET", "/ip", nil)
	req.RemoteAddr = "203.0.113.7:4000"
	resp, err := app.Test(req)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "203.0.113.7" {
		t.Fatalf("remote IP %q", b)
	}
}
