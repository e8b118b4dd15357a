package idempotency_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/idempotency"
)

// overrunApp is idempotency at App level and middleware.Timeout(50ms) on
// POST /orders, whose handler runs h after counting its run.
func overrunApp(t *testing.T, runs *atomic.Int64, h func(c *fx.Ctx, n int64) error) *fx.App {
	t.Helper()
	app := quietApp()
	app.Use(idempotency.New(idempotency.Config{ShareAnonymous: true}))
	app.Route(fx.Route{Method: "POST", Path: "/orders", Middleware: []fx.Middleware{middleware.Timeout(50 * time.Millisecond)},
		Handler: func(c *fx.Ctx) error { return h(c, runs.Add(1)) }})
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	return app
}

// A handler that commits after its route's Timeout (the client got 504)
// has done its work: a retry must not run it again. Its claim is held while
// it runs (a retry then gets 409 with Retry-After), and once it returned,
// the answer it wrote — not the 504 — is stored and replayed. A late
// error answer is stored as its envelope, as any error answer is.
func TestTimeoutOverrunRunsOnce(t *testing.T) {
	var runs atomic.Int64
	started, release := make(chan struct{}), make(chan struct{})
	app := overrunApp(t, &runs, func(c *fx.Ctx, n int64) error {
		if n == 1 {
			close(started)
			<-release // ignores c.Context(): commits late
		}
		c.SetHeader("Location", "/orders/1")
		return c.JSON(201, map[string]int64{"order": n})
	})
	first := make(chan result, 1)
	go func() { first <- do(app, "POST", "/orders", "k", "{}") }()
	<-started
	time.Sleep(80 * time.Millisecond) // past the 50 ms deadline, the handler still running
	r := do(app, "POST", "/orders", "k", "{}")
	close(release)
	if r.status != 409 || r.code != fx.ErrorCodes.IdempotencyInFlight || r.retryAfter == "" {
		t.Fatalf("retry while the late handler runs: %+v, want 409 with Retry-After", r)
	}
	if r := <-first; r.status != 504 || r.code != fx.ErrorCodes.Timeout {
		t.Fatalf("first: %+v, want 504", r)
	}
	r = do(app, "POST", "/orders", "k", "{}")
	if r.status != 201 || r.replayed != "true" || r.body != `{"order":1}` || r.loc != "/orders/1" {
		t.Fatalf("retry after the 504: %+v, want the replay of the late 201", r)
	}
	if runs.Load() != 1 {
		t.Fatalf("handler ran %d times, want 1", runs.Load())
	}

	var errRuns atomic.Int64
	conflict := fx.NewError(409, "APP_SOLD_OUT", "sold out")
	app = overrunApp(t, &errRuns, func(c *fx.Ctx, _ int64) error {
		time.Sleep(100 * time.Millisecond)
		return conflict
	})
	if r := do(app, "POST", "/orders", "k", "{}"); r.status != 504 {
		t.Fatalf("late error, first: %+v", r)
	}
	if r := do(app, "POST", "/orders", "k", "{}"); r.status != 409 || r.code != "APP_SOLD_OUT" || r.replayed != "true" || errRuns.Load() != 1 {
		t.Fatalf("late error, retry: %+v after %d runs, want the replay of 409 APP_SOLD_OUT", r, errRuns.Load())
	}
}

// A handler that gave up at its deadline (it returned c.Context()'s
// error) did not do its work: the claim is released once it returned, and
// a retry runs it again.
func TestTimeoutHonouredReleases(t *testing.T) {
	var runs atomic.Int64
	app := overrunApp(t, &runs, func(c *fx.Ctx, n int64) error {
		if n == 1 {
			<-c.Context().Done()
			return c.Context().Err()
		}
		return c.JSON(201, map[string]int64{"order": n})
	})
	if r := do(app, "POST", "/orders", "k", "{}"); r.status != 504 {
		t.Fatalf("first: %+v", r)
	}
	if r := do(app, "POST", "/orders", "k", "{}"); r.status != 201 || r.replayed != "" || runs.Load() != 2 {
		t.Fatalf("retry: %+v after %d runs, want a second run", r, runs.Load())
	}
}
