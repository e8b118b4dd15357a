package fx

import (
	"bytes"
	"net"
	"testing"
)

// TestRaw recycles its exchangeConn, but only one fasthttp has closed. A
// handler that hijacks the connection hands it to a goroutine that runs
// after TestRaw returned; recycling that conn would let the goroutine's
// reads and writes land in the next exchange (its request bytes consumed,
// its response interleaved with the late write). The guard: ServeConn
// closes a conn it is done with, the hijack goroutine closes it only when
// its handler returns, and TestRaw pools a conn only once it is closed.
func TestTestRawDoesNotRecycleAHijackedConn(t *testing.T) {
	app := New()
	var hijacked net.Conn
	release, done := make(chan struct{}), make(chan struct{})
	app.Get("/hijack", func(c *Ctx) error {
		hijacked = c.RequestCtx().Conn()
		c.RequestCtx().Hijack(func(net.Conn) {
			<-release
			close(done)
		})
		return c.String(200, "hijacked")
	})
	app.Get("/ok", func(c *Ctx) error { return c.String(200, "ok") })
	t.Cleanup(func() { _ = app.Shutdown() })

	out, err := app.TestRaw(nil, []byte("GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n"))
	if err != nil || !bytes.HasPrefix(out, []byte("HTTP/1.1 200 ")) {
		t.Fatalf("hijacking request: %v\n%s", err, out)
	}
	// The hijack goroutine still holds its conn: no exchange may get it.
	for range 4 {
		ex := exchangePool.Get().(*exchangeConn)
		if net.Conn(ex) == hijacked {
			t.Fatal("TestRaw recycled the conn a hijack handler still holds")
		}
		defer exchangePool.Put(ex)
	}
	close(release)
	<-done

	// The exchanges after it are served as before.
	if out, err := app.TestRaw(nil, []byte("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil || !bytes.HasSuffix(out, []byte("\r\n\r\nok")) {
		t.Fatalf("plain request: %v\n%s", err, out)
	}
}
