package fx

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"net/http"
	"testing"
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
