package fxtest

import (
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
)

// recordingTB keeps what Serve registers and reports, so that its
// cleanup can be run, and its failures read, by the test itself.
type recordingTB struct {
	testing.TB
	cleanups []func()
	errs     []string
}

func (r *recordingTB) Helper()          {}
func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}

// A request still in its handler when the test ends fails the test once
// the bound has passed, instead of holding the test run until its
// timeout.
func TestServeShutdownIsBounded(t *testing.T) {
	defer func(d time.Duration) { serveShutdownTimeout = d }(serveShutdownTimeout)
	serveShutdownTimeout = 200 * time.Millisecond
	entered, release := make(chan struct{}), make(chan struct{})
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Get("/hold", func(c *fx.Ctx) error {
		close(entered)
		<-release // ignores c.Context(): a handler the shutdown must wait for
		return c.String(200, "late")
	})
	rec := &recordingTB{TB: t}
	addr := Serve(rec, app)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	<-entered
	start := time.Now()
	for _, f := range rec.cleanups {
		f()
	}
	close(release)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("cleanup took %v with a 200ms bound", took)
	}
	if len(rec.errs) == 0 || !strings.Contains(rec.errs[0], "is a connection still open?") {
		t.Fatalf("cleanup reported %q, want the bounded shutdown named", rec.errs)
	}
}
