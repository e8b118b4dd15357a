package middleware_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
)

// timeoutEnvelope is the exact body of every 504 Timeout answers.
const timeoutEnvelope = `{"error":{"code":"FX_TIMEOUT","message":"The request was not handled in time"}}`

// expectTimeout checks that r is the 504 of Timeout, its envelope exact.
func expectTimeout(t *testing.T, r rawResult) {
	t.Helper()
	if r.status != 504 || r.body != timeoutEnvelope {
		t.Fatalf("got %d %q, want 504 %s", r.status, r.body, timeoutEnvelope)
	}
}

func newTimeoutApp(t *testing.T) *fx.App {
	app := fx.New(quiet)
	t.Cleanup(func() { app.Shutdown() })
	return app
}

// waitForContext is a handler that honours its context: it would answer
// 200 after a minute, and returns the context's error when it ends.
func waitForContext(c *fx.Ctx) error {
	select {
	case <-c.Context().Done():
		return fmt.Errorf("query: %w", c.Context().Err())
	case <-time.After(time.Minute):
		return c.String(200, "too late")
	}
}

// TestTimeoutHonouringHandler: a handler that watches c.Context() is
// answered 504 FX_TIMEOUT at the deadline, with the envelope only.
func TestTimeoutHonouringHandler(t *testing.T) {
	app := newTimeoutApp(t)
	app.Route(fx.Route{Method: "GET", Path: "/q", Middleware: []fx.Middleware{middleware.Timeout(50 * time.Millisecond)},
		Handler: waitForContext})
	r := send(t, app, "GET", "/q")
	expectTimeout(t, r)
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
}

// TestTimeoutDiscardsLateAnswer: a handler that wrote its answer and then
// overran gets the envelope only: its body, status and the headers that
// described its answer are gone; headers set around it (a request ID) stay.
func TestTimeoutDiscardsLateAnswer(t *testing.T) {
	app := newTimeoutApp(t)
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		c.SetHeader("X-Request-ID", "r1")
		return next()
	})
	app.Use(middleware.Timeout(20 * time.Millisecond))
	var hookErr any
	app.OnError(func(c *fx.Ctx, err any) bool { hookErr = err; return false })
	cause := errors.New("db: write conflict")
	app.Get("/late", func(c *fx.Ctx) error {
		for _, h := range []string{"ETag", "Last-Modified", "Content-Disposition", "Content-Language",
			"Content-Location", "Location", "Cache-Control", "Expires", "Content-Encoding"} {
			c.SetHeader(h, "x")
		}
		if err := c.JSON(201, map[string]string{"id": "42", "pad": strings.Repeat("p", 4096)}); err != nil {
			return err
		}
		time.Sleep(40 * time.Millisecond) // ignores its context
		return nil
	})
	app.Get("/late-error", func(c *fx.Ctx) error {
		c.String(200, "partial")
		time.Sleep(40 * time.Millisecond)
		return cause
	})
	r := send(t, app, "GET", "/late")
	expectTimeout(t, r)
	for _, h := range []string{"ETag", "Last-Modified", "Content-Disposition", "Content-Language",
		"Content-Location", "Location", "Cache-Control", "Expires", "Content-Encoding"} {
		if v := r.header.Get(h); v != "" {
			t.Errorf("%s: %q kept from the late answer", h, v)
		}
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if r.header.Get("X-Request-ID") != "r1" {
		t.Errorf("X-Request-ID lost: %v", r.header)
	}

	// A late handler's own error stays behind the 504 for the hook and log.
	r = send(t, app, "GET", "/late-error")
	expectTimeout(t, r)
	err, _ := hookErr.(error)
	var fe *fx.Error
	if !errors.Is(err, cause) || !errors.As(err, &fe) || fe.Code != fx.ErrorCodes.Timeout {
		t.Errorf("hook saw %v, want the 504 wrapping %v", hookErr, cause)
	}
}

// TestTimeoutLateStreamNeverRuns: a late handler that registered a stream
// gets the 504, and the stream function is never started.
func TestTimeoutLateStreamNeverRuns(t *testing.T) {
	app := newTimeoutApp(t)
	var ran atomic.Bool
	app.Route(fx.Route{Method: "GET", Path: "/s", Middleware: []fx.Middleware{middleware.Timeout(10 * time.Millisecond)},
		Handler: func(c *fx.Ctx) error {
			c.Stream("text/plain", func(w *bufio.Writer) error {
				ran.Store(true)
				_, err := w.WriteString("streamed")
				return err
			})
			time.Sleep(30 * time.Millisecond)
			return nil
		}})
	r := send(t, app, "GET", "/s")
	expectTimeout(t, r)
	if ran.Load() {
		t.Error("the late handler's stream function ran")
	}
}

// TestTimeoutFastHandler: a handler within its deadline is untouched, and
// its context carries the deadline.
func TestTimeoutFastHandler(t *testing.T) {
	app := newTimeoutApp(t)
	app.Use(middleware.Timeout(time.Hour))
	var left time.Duration
	app.Get("/fast", func(c *fx.Ctx) error {
		dl, ok := c.Context().Deadline()
		if !ok {
			return errors.New("no deadline")
		}
		left = time.Until(dl)
		c.SetHeader("ETag", `"v1"`)
		return c.JSON(200, map[string]int{"n": 1})
	})
	r := send(t, app, "GET", "/fast")
	if r.status != 200 || r.body != `{"n":1}` || r.header.Get("ETag") != `"v1"` {
		t.Fatalf("got %d %q %v", r.status, r.body, r.header)
	}
	if left <= 59*time.Minute || left > time.Hour {
		t.Errorf("deadline %v ahead, want about 1h", left)
	}
}

// TestTimeoutNestedEarliestWins: a group's 1s and a route's 50ms give a
// 50ms deadline, in either nesting order.
func TestTimeoutNestedEarliestWins(t *testing.T) {
	for _, tc := range []struct {
		name          string
		group, route_ time.Duration
	}{{"group 1s, route 50ms", time.Second, 50 * time.Millisecond}, {"group 50ms, route 1s", 50 * time.Millisecond, time.Second}} {
		t.Run(tc.name, func(t *testing.T) {
			app := newTimeoutApp(t)
			var left time.Duration
			app.Group("/g", middleware.Timeout(tc.group)).Route(fx.Route{Method: "GET", Path: "/q",
				Middleware: []fx.Middleware{middleware.Timeout(tc.route_)},
				Handler: func(c *fx.Ctx) error {
					dl, _ := c.Context().Deadline()
					left = time.Until(dl)
					return waitForContext(c)
				}})
			r := send(t, app, "GET", "/g/q")
			expectTimeout(t, r)
			if left > 50*time.Millisecond {
				t.Errorf("the handler's deadline was %v ahead, want at most 50ms", left)
			}
		})
	}
}

// TestTimeoutForeignDeadlineIsHandlerError: a DeadlineExceeded from some
// other context, with the request's still live, is the handler's own
// failure (500), not a 504.
func TestTimeoutForeignDeadlineIsHandlerError(t *testing.T) {
	app := newTimeoutApp(t)
	app.Use(middleware.Timeout(time.Hour))
	app.Get("/x", func(c *fx.Ctx) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		<-ctx.Done()
		return ctx.Err()
	})
	r := send(t, app, "GET", "/x")
	if r.status != 500 || !strings.Contains(r.body, `"FX_INTERNAL_ERROR"`) {
		t.Fatalf("got %d %q, want 500 FX_INTERNAL_ERROR", r.status, r.body)
	}
}

// TestTimeoutDeadlineEndsWithRequest: the pooled Ctx does not carry a
// deadline into the next request, and the timed request's context is done
// once it ended.
func TestTimeoutDeadlineEndsWithRequest(t *testing.T) {
	app := newTimeoutApp(t)
	var kept context.Context
	app.Route(fx.Route{Method: "GET", Path: "/timed", Middleware: []fx.Middleware{middleware.Timeout(time.Hour)},
		Handler: func(c *fx.Ctx) error { kept = c.Context(); return c.String(200, "ok") }})
	app.Get("/plain", func(c *fx.Ctx) error {
		if _, ok := c.Context().Deadline(); ok {
			return errors.New("deadline carried over from another request")
		}
		return c.String(200, "ok")
	})
	for range 20 {
		if r := send(t, app, "GET", "/timed"); r.status != 200 {
			t.Fatalf("/timed: %d %s", r.status, r.body)
		}
		if kept.Err() == nil {
			t.Fatal("the request's context is live after the request ended")
		}
		if r := send(t, app, "GET", "/plain"); r.status != 200 {
			t.Fatalf("/plain: %d %s", r.status, r.body)
		}
	}
}

// TestTimeoutNoCrossTalk is the failure of goroutine-based timeouts
// (labstack/echo#2754): handlers finishing around their deadline, many at
// once, must each get their own body or the 504, never another request's
// body. Run with -race it also shows that nothing writes the response
// concurrently.
func TestTimeoutNoCrossTalk(t *testing.T) {
	app := newTimeoutApp(t)
	app.Route(fx.Route{Method: "GET", Path: "/echo/:n", Middleware: []fx.Middleware{middleware.Timeout(5 * time.Millisecond)},
		Handler: func(c *fx.Ctx) error {
			n := c.Param("n")
			time.Sleep(time.Duration(len(n)%3) * 3 * time.Millisecond) // 0, 3 or 6ms: around the deadline
			return c.String(200, "n="+n)
		}})
	var wg sync.WaitGroup
	var timedOut, ok atomic.Int32
	for i := range 60 {
		wg.Go(func() {
			n := strings.Repeat("1", i%3+1) + fmt.Sprint(i)
			resp, err := app.Test(httptest.NewRequest("GET", "/echo/"+n, nil))
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			switch {
			case resp.StatusCode == 200 && string(b) == "n="+n:
				ok.Add(1)
			case resp.StatusCode == 504 && string(b) == timeoutEnvelope:
				timedOut.Add(1)
			default:
				t.Errorf("/echo/%s: %d %q", n, resp.StatusCode, b)
			}
		})
	}
	wg.Wait()
	if timedOut.Load() == 0 {
		t.Error("no request timed out: the test did not exercise the deadline")
	}
}

func TestTimeoutRefusesNonPositive(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		t.Run(d.String(), func(t *testing.T) { expectPanic(t, func() { middleware.Timeout(d) }) })
	}
}
