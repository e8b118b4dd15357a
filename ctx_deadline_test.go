package fx_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fxhq/fx"
)

// TestSetDeadlineEarliestWins: a later deadline never extends an earlier
// one, an earlier one shortens it (also after Context was first called),
// and every context of the request ends with it.
func TestSetDeadlineEarliestWins(t *testing.T) {
	app := quietFor(t)
	base := time.Now().Add(time.Hour)
	var seen []time.Time
	var ctxs []context.Context
	record := func(c *fx.Ctx) {
		dl, _ := c.Context().Deadline()
		seen = append(seen, dl)
		ctxs = append(ctxs, c.Context())
	}
	app.Get("/first", func(c *fx.Ctx) error {
		c.SetDeadline(base)
		record(c)
		c.SetDeadline(base.Add(time.Minute)) // later: ignored
		record(c)
		c.SetDeadline(base.Add(-time.Minute)) // earlier: wins
		record(c)
		c.SetDeadline(time.Time{}) // zero: no deadline, not an expired one
		if c.Context().Err() != nil {
			return c.Context().Err()
		}
		return c.String(200, "ok")
	})
	app.Get("/after-context", func(c *fx.Ctx) error {
		record(c) // Context created before any deadline
		c.SetDeadline(base)
		record(c)
		return c.String(200, "ok")
	})
	app.Get("/pending", func(c *fx.Ctx) error {
		c.SetDeadline(base.Add(time.Minute)) // recorded: Context not created yet
		c.SetDeadline(base)
		c.SetDeadline(base.Add(2 * time.Minute))
		record(c)
		return c.String(200, "ok")
	})
	for _, p := range []string{"/first", "/after-context", "/pending"} {
		if r := do(t, app, "GET", p, ""); r.status != 200 {
			t.Fatalf("%s: %d %s", p, r.status, r.body)
		}
	}
	want := []time.Time{base, base, base.Add(-time.Minute), {}, base, base}
	for i := range want {
		if !seen[i].Equal(want[i]) {
			t.Errorf("deadline %d = %v, want %v", i, seen[i], want[i])
		}
	}
	for i, ctx := range ctxs {
		if ctx.Err() != context.Canceled {
			t.Errorf("context %d after the request: %v, want Canceled", i, ctx.Err())
		}
	}
}

// TestSetDeadlineEndsWithRequest: a deadline recorded by a handler that
// never asked for its context is not carried by the pooled Ctx into the
// next request.
func TestSetDeadlineEndsWithRequest(t *testing.T) {
	app := quietFor(t)
	app.Get("/set", func(c *fx.Ctx) error {
		c.SetDeadline(time.Now().Add(time.Hour))
		return c.String(200, "ok")
	})
	app.Get("/plain", func(c *fx.Ctx) error {
		if dl, ok := c.Context().Deadline(); ok {
			return fmt.Errorf("deadline %v carried over from another request", dl)
		}
		return c.String(200, "ok")
	})
	for range 20 { // sequential requests reuse the pooled Ctx
		for _, p := range []string{"/set", "/plain"} {
			if r := do(t, app, "GET", p, ""); r.status != 200 {
				t.Fatalf("%s: %d %s", p, r.status, r.body)
			}
		}
	}
}
