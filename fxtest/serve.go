package fxtest

import (
	"net"
	"testing"

	"github.com/fxhq/fx"
)

// Serve serves app over TCP on a new loopback listener (127.0.0.1, a free
// port), as net/http/httptest.NewServer does for a handler, and returns
// its address ("127.0.0.1:PORT"). Use it where the test client's
// in-memory connection is not enough: a real client library, raw bytes
// on a socket, timeouts, connection limits.
//
// The App is served by app.Serve, so everything Listen does on a
// connection happens. When the test ends (t.Cleanup), app.Shutdown runs
// and Serve's return is awaited; an error from either fails the test.
// Serve itself fails the test at once when no listener can be opened.
func Serve(t testing.TB, app *fx.App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fxtest.Serve: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Serve(ln) }()
	t.Cleanup(func() {
		if err := app.Shutdown(); err != nil {
			t.Errorf("fxtest.Serve: Shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("fxtest.Serve: Serve: %v", err)
		}
	})
	return ln.Addr().String()
}
