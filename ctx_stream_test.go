package fx_test

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
)

func TestStreamWritesChunks(t *testing.T) {
	app := quietFor(t)
	app.Get("/", func(c *fx.Ctx) error {
		name := c.Query("name") // read from c before: the stream runs after the handler
		return c.Stream("text/plain", func(w *bufio.Writer) error {
			w.WriteString("hello ")
			if err := w.Flush(); err != nil {
				return err
			}
			w.WriteString(name)
			return nil // Stream flushes the rest
		})
	})
	r := do(t, app, "GET", "/?name=ann", "")
	if r.status != 200 || string(r.body) != "hello ann" || r.header.Get("Content-Type") != "text/plain" {
		t.Fatalf("%d %q %v", r.status, r.body, r.header)
	}
}

// A stream function that fails after the headers went out cannot send an
// envelope: the response is cut before its last chunk, so the client sees
// an error (not a complete body), and the failure is logged.
func TestStreamErrorTruncatesAndLogs(t *testing.T) {
	for _, mode := range []string{"error", "panic"} {
		t.Run(mode, func(t *testing.T) {
			app, logs := newLogged()
			app.Get("/", func(c *fx.Ctx) error {
				return c.Stream("text/plain", func(w *bufio.Writer) error {
					w.WriteString("partial")
					w.Flush()
					if mode == "panic" {
						panic("boom")
					}
					return errors.New("database went away")
				})
			})
			base := "http://" + fxtest.Serve(t, app)
			resp, err := http.Get(base + "/")
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil || string(b) != "partial" {
				t.Fatalf("body %q, err %v: want the partial body and a read error", b, err)
			}
			if !strings.Contains(logs.String(), "stream failed") {
				t.Fatalf("not logged: %s", logs)
			}
		})
	}
}

func TestStreamNotRunForHeadOrReplacedResponse(t *testing.T) {
	app := quietFor(t)
	var ran atomic.Int32
	fn := func(w *bufio.Writer) error { ran.Add(1); w.WriteString("x"); return nil }
	app.Handle("HEAD", "/", func(c *fx.Ctx) error { return c.Stream("text/plain", fn) })
	app.Get("/fail", func(c *fx.Ctx) error {
		c.Stream("text/plain", fn)
		return fx.NewError(409, "APP_CONFLICT", "no")
	})
	if r := do(t, app, "HEAD", "/", ""); r.status != 200 || len(r.body) != 0 {
		t.Fatalf("HEAD: %d %q", r.status, r.body)
	}
	mustEnvelope(t, do(t, app, "GET", "/fail", ""), 409, "APP_CONFLICT")
	if n := ran.Load(); n != 0 {
		t.Fatalf("stream function ran %d times", n)
	}
}

// WriteTimeout bounds a client that stops reading, not the stream's
// length: it is renewed per flush, and when the function returns (the
// final chunk is written then: a function that works longer than
// WriteTimeout after its last flush once lost it, and the client saw a
// truncated body).
func TestStreamOutlivesWriteTimeout(t *testing.T) {
	t.Parallel()
	app := quiet(fx.Config{WriteTimeout: 150 * time.Millisecond})
	app.Get("/", func(c *fx.Ctx) error {
		return c.Stream("text/plain", func(w *bufio.Writer) error {
			for i := range 6 {
				w.WriteString(string(rune('a' + i)))
				if err := w.Flush(); err != nil {
					return err
				}
				time.Sleep(60 * time.Millisecond)
			}
			return nil
		})
	})
	app.Get("/quiet-end", func(c *fx.Ctx) error {
		return c.Stream("text/plain", func(w *bufio.Writer) error {
			w.WriteString("a")
			if err := w.Flush(); err != nil {
				return err
			}
			time.Sleep(300 * time.Millisecond) // twice WriteTimeout, nothing flushed
			return nil
		})
	})
	addr := fxtest.Serve(t, app)
	for path, want := range map[string]string{"/": "abcdef", "/quiet-end": "a"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != want {
			t.Errorf("%s: body %q err %v: a stream longer than the 150 ms WriteTimeout was cut", path, b, err)
		}
	}
}

func TestSSEFormat(t *testing.T) {
	app := quietFor(t)
	app.Get("/", func(c *fx.Ctx) error {
		return c.SSE(func(e *fx.EventWriter) error {
			if err := e.Comment("hello\nthere"); err != nil {
				return err
			}
			if err := e.Send(fx.Event{ID: "7", Event: "update", Data: "line1\nline2\r\nline3\rline4", Retry: 2500 * time.Millisecond}); err != nil {
				return err
			}
			if err := e.Send(fx.Event{Data: ""}); err != nil {
				return err
			}
			if err := e.Send(fx.Event{ID: "1\nevent: admin", Data: "x"}); err == nil {
				return errors.New("an ID with a line break was accepted")
			}
			if err := e.Send(fx.Event{Event: "a\rb", Data: "x"}); err == nil {
				return errors.New("an event type with a line break was accepted")
			}
			return e.Send(fx.Event{Data: "end"})
		})
	})
	r := do(t, app, "GET", "/", "")
	want := ": hello\n: there\n\n" +
		"id: 7\nevent: update\nretry: 2500\ndata: line1\ndata: line2\ndata: line3\ndata: line4\n\n" +
		"data: \n\n" +
		"data: end\n\n"
	if string(r.body) != want {
		t.Fatalf("body\n%q\nwant\n%q", r.body, want)
	}
	if r.header.Get("Content-Type") != "text/event-stream" || r.header.Get("Cache-Control") != "no-cache" ||
		r.header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("headers %v", r.header)
	}
}

// Each event reaches the client before the next is produced, and a stream
// that waits for more stops when the App shuts down: Shutdown is not held
// up and the client sees a clean end of stream.
func TestSSEFlushesPerEventAndStopsOnShutdown(t *testing.T) {
	t.Parallel()
	app := quiet()
	gotFirst := make(chan struct{})
	app.Get("/events", func(c *fx.Ctx) error {
		return c.SSE(func(e *fx.EventWriter) error {
			if err := e.Send(fx.Event{Data: "first"}); err != nil {
				return err
			}
			<-gotFirst // only once the client has read it: it was flushed
			if err := e.Send(fx.Event{Data: "second"}); err != nil {
				return err
			}
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-e.Done():
					return e.Send(fx.Event{Event: "bye", Data: "shutting down"})
				case <-tick.C:
					if err := e.Comment("ping"); err != nil {
						return err
					}
				}
			}
		})
	})
	resp, err := http.Get("http://" + fxtest.Serve(t, app) + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, _ := br.ReadString('\n'); line != "data: first\n" {
		t.Fatalf("first line %q", line)
	}
	close(gotFirst)
	shut := make(chan error, 1)
	go func() { shut <- app.Shutdown() }()
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatalf("stream ended with %v after %q", err, rest)
	}
	if !strings.Contains(string(rest), "data: second\n") || !strings.HasSuffix(string(rest), "event: bye\ndata: shutting down\n\n") {
		t.Fatalf("rest %q", rest)
	}
	if err := kittest.Within(t, shut, "Shutdown held up by the stream"); err != nil {
		t.Fatal(err)
	}
}

// A RequestCtx set up with Init (as custom transports and tests do) has a
// placeholder connection whose deadline methods panic; Stream must leave
// it alone (it called SetWriteDeadline on it, and the request was a 500).
func TestStreamOnInitRequestCtx(t *testing.T) {
	app := quiet()
	app.Get("/", func(c *fx.Ctx) error {
		return c.Stream("text/plain", func(w *bufio.Writer) error { _, err := w.WriteString("ab"); return err })
	})
	rc := kittest.RequestCtx("GET", "/")
	app.Handler()(rc)
	if rc.Response.StatusCode() != 200 || string(rc.Response.Body()) != "ab" {
		t.Fatalf("%d %q", rc.Response.StatusCode(), rc.Response.Body())
	}
}

// A client that goes away ends the stream function: its next write fails
// (the pipe is closed when fasthttp's write to the client fails), so no
// goroutine is left running.
func TestSSEClientGoneEndsStream(t *testing.T) {
	t.Parallel()
	app := quiet()
	ended := make(chan error, 1)
	app.Get("/", func(c *fx.Ctx) error {
		return c.SSE(func(e *fx.EventWriter) error {
			for {
				if err := e.Comment("ping"); err != nil {
					ended <- err
					return err
				}
				time.Sleep(2 * time.Millisecond)
			}
		})
	})
	conn := dialBounded(t, fxtest.Serve(t, app), 10*time.Second)
	conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	buf := make([]byte, 512)
	if n, err := conn.Read(buf); err != nil || !strings.Contains(string(buf[:n]), "text/event-stream") {
		t.Fatalf("%q %v", buf[:n], err)
	}
	conn.Close()
	if err := kittest.Within(t, ended, "the stream function kept running after the client left"); err == nil {
		t.Fatal("no error after the client left")
	}
}

// The write deadline a stream renewed does not outlive its response: a
// keep-alive connection serves its next request after WriteTimeout has
// passed since the stream's last flush.
func TestStreamDeadlineDoesNotLeakToNextRequest(t *testing.T) {
	t.Parallel()
	app := quiet(fx.Config{WriteTimeout: 100 * time.Millisecond})
	app.Get("/s", func(c *fx.Ctx) error {
		return c.Stream("text/plain", func(w *bufio.Writer) error { _, err := w.WriteString("s"); return err })
	})
	app.Get("/p", func(c *fx.Ctx) error { return c.String(200, "plain") })
	conn := dialBounded(t, fxtest.Serve(t, app), 10*time.Second)
	defer conn.Close()
	br := bufio.NewReader(conn)
	get := func(path string) string {
		return string(roundTripRaw(t, conn, br, "GET", "GET "+path+" HTTP/1.1\r\nHost: a\r\n\r\n").body)
	}
	if got := get("/s"); got != "s" {
		t.Fatal(got)
	}
	time.Sleep(250 * time.Millisecond) // past the renewed deadline
	if got := get("/p"); got != "plain" {
		t.Fatal(got)
	}
}
