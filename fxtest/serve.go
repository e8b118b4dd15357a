package fxtest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/fxhq/fx"
)

// serveShutdownTimeout bounds the shutdown Serve runs when a test ends
// (a variable for this package's own test of it).
var serveShutdownTimeout = 10 * time.Second

// Serve serves app over TCP on a new loopback listener (127.0.0.1, a free
// port), as net/http/httptest.NewServer does for a handler, and returns
// its address ("127.0.0.1:PORT"). Use it where the test client's
// in-memory connection is not enough: a real client library, raw bytes
// on a socket, timeouts, connection limits.
//
// The App is served by app.Serve, so everything Listen does on a
// connection happens. When the test ends (t.Cleanup), the App is shut
// down and Serve's return is awaited, both within 10 seconds;
// an error from either, or a shutdown still waiting then (a connection
// the test left open: a hijacked or WebSocket connection, a stream that
// never ends), fails the test instead of hanging it. Serve itself fails
// the test at once when no listener can be opened.
func Serve(t testing.TB, app *fx.App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fxtest.Serve: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), serveShutdownTimeout)
		defer cancel()
		if err := app.ShutdownWithContext(ctx); err != nil {
			t.Errorf("fxtest.Serve: Shutdown (bounded by %v; is a connection still open?): %v", serveShutdownTimeout, err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("fxtest.Serve: Serve: %v", err)
			}
		case <-ctx.Done():
			t.Errorf("fxtest.Serve: Serve had not returned %v after the shutdown began", serveShutdownTimeout)
		}
	})
	return ln.Addr().String()
}
