package demo

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
)

// serve returns only after Shutdown is complete: a request in flight at
// the signal gets its full response and OnShutdown has run.
func TestServeWaitsForShutdown(t *testing.T) {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	entered := make(chan struct{})
	release := make(chan struct{})
	var closed atomic.Bool
	app.OnShutdown(func() error { closed.Store(true); return nil })
	app.Get("/slow", func(c *fx.Ctx) error {
		close(entered)
		<-release
		return c.String(200, "finished")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan os.Signal, 1)
	returned := make(chan error, 1)
	go func() {
		serveErr, shutdownErr := serve(app, ln, stop)
		if serveErr == nil {
			serveErr = shutdownErr
		}
		returned <- serveErr
	}()
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/slow")
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	<-entered
	stop <- os.Interrupt
	// Wait (bounded) until the listener is closed: app.Serve has returned
	// by then, so serve must still be waiting for the in-flight request.
	for range 500 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			break
		}
		c.Close()
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-returned:
		t.Fatalf("serve returned (%v) while a request was in flight", err)
	default:
	}
	close(release)
	if body := <-got; body != "finished" {
		t.Errorf("in-flight request got %q", body)
	}
	if err := <-returned; err != nil {
		t.Errorf("serve = %v", err)
	}
	if !closed.Load() {
		t.Error("serve returned before OnShutdown ran")
	}
}
