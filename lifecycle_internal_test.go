package fx

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestStopStateIsOneState: whether the shutdown has begun is one state,
// and each step of it is seen by every reader at once: in the drain's
// first phase (fxtest's Client.BeginShutdown) a response closes its
// connection, the handler's context and App.Done are done, and in-memory
// exchanges and listeners are still served; once Shutdown has begun,
// neither is, and the state never moves back.
func TestStopStateIsOneState(t *testing.T) {
	app := New()
	app.Get("/", func(c *Ctx) error {
		if c.Context().Err() != nil {
			return c.String(200, "context done")
		}
		return c.String(200, "context live")
	})
	get := func() (body string, closed bool, err error) {
		out, err := app.TestRaw(nil, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		if err != nil {
			return "", false, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), nil)
		if err != nil {
			t.Fatalf("%v in %q", err, out)
		}
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return b.String(), resp.Close, nil
	}
	done := func() bool {
		select {
		case <-app.Done():
			return true
		default:
			return false
		}
	}

	if body, closed, err := get(); err != nil || body != "context live" || closed || done() {
		t.Fatalf("serving: %q, closed %v, %v, Done closed %v", body, closed, err, done())
	}

	if !app.life.stop.begin(phaseDraining) || app.life.stop.begin(phaseDraining) {
		t.Error("begin(phaseDraining) did not move the state exactly once")
	}
	if body, closed, err := get(); err != nil || body != "context done" || !closed || !done() {
		t.Errorf("draining: %q, closed %v, %v, Done closed %v; want the exchange served, its context done, Connection: close, Done closed", body, closed, err, done())
	}
	sl := &serveListener{}
	if !app.life.add(sl) {
		t.Error("draining: a listener was refused before Shutdown")
	}
	app.life.remove(sl)

	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := get(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("after Shutdown: exchange %v, want net.ErrClosed", err)
	}
	if app.life.add(sl) {
		t.Error("after Shutdown: a listener was accepted")
	}
	if app.life.stop.begin(phaseDraining) || !app.life.stop.closed() {
		t.Error("the state moved back from closed")
	}
}

// TestRequestContextsEndWithTheShutdown: every request context in flight,
// whichever list its Ctx belongs to, is done when the shutdown begins; one
// made after is done at once; and a request that ends leaves no trace in
// the lists (stopState.track and untrack).
func TestRequestContextsEndWithTheShutdown(t *testing.T) {
	app := New()
	const inFlight = 3 * ctxShards
	started := make(chan struct{}, inFlight)
	app.Get("/hold", func(c *Ctx) error {
		if c.Query("deadline") != "" { // a deadline set after Context derives a context
			c.Context()
			c.SetDeadline(time.Now().Add(time.Minute))
		}
		ctx := c.Context()
		started <- struct{}{}
		select {
		case <-ctx.Done():
			return c.String(200, context.Cause(ctx).Error())
		case <-time.After(10 * time.Second):
			return c.String(200, "not ended")
		}
	})
	app.Get("/now", func(c *Ctx) error {
		return c.String(200, fmt.Sprint(c.Context().Err()))
	})
	tracked := func() (n int) {
		for i := range app.life.stop.shards {
			sh := &app.life.stop.shards[i]
			sh.mu.Lock()
			sh.ctxs.Each(func(*Ctx) { n++ })
			sh.mu.Unlock()
		}
		return n
	}
	body := func(target string) string {
		resp, err := app.Test(httptest.NewRequest("GET", target, nil))
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}

	if got := body("/now"); got != "<nil>" || tracked() != 0 {
		t.Fatalf("before the shutdown: Err %s, %d contexts tracked after the request", got, tracked())
	}
	results := make(chan string, inFlight)
	for i := range inFlight {
		target := "/hold"
		if i%2 == 1 {
			target += "?deadline=1"
		}
		go func() { results <- body(target) }()
	}
	for range inFlight {
		<-started
	}
	if n := tracked(); n != inFlight {
		t.Fatalf("%d contexts tracked with %d requests in flight", n, inFlight)
	}
	used := 0 // lists with a context in them
	for i := range app.life.stop.shards {
		in := 0
		app.life.stop.shards[i].ctxs.Each(func(*Ctx) { in++ })
		if in > 0 {
			used++
		}
	}
	if used < 2 {
		t.Errorf("%d requests in flight used %d of %d lists", inFlight, used, ctxShards)
	}

	app.life.stop.begin(phaseDraining)
	for range inFlight {
		if got := <-results; got != context.Canceled.Error() {
			t.Errorf("a request in flight at the shutdown: %q, want its context canceled", got)
		}
	}
	if got := body("/now"); got != context.Canceled.Error() {
		t.Errorf("a context made after the shutdown began: Err %s, want it done at once", got)
	}
	if n := tracked(); n != 0 {
		t.Errorf("%d contexts still tracked after every request ended", n)
	}
}
