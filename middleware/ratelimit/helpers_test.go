package ratelimit_test

import (
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest/jwtkit"
)

// quiet is an fx.Config whose logger drops everything, for tests that
// provoke 5xx on purpose.
var quiet = fx.Config{Logger: slog.New(slog.DiscardHandler)}

// fakeClock is a settable clock for MemoryStoreConfig.Now.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(jwtkit.FixedNow.UnixNano())
	return c
}
func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// get sends GET target with header name/value pairs through fxtest's
// client, leniently: the test handlers' own refusals are not declared.
func get(t *testing.T, app *fx.App, target string, header ...string) *fxtest.Response {
	t.Helper()
	r := fxtest.New(t, app, fxtest.Lenient()).Get(target)
	for i := 0; i+1 < len(header); i += 2 {
		r = r.Header(header[i], header[i+1])
	}
	return r.Do()
}

// expectError checks an error response's envelope (fxtest.AssertError:
// status, code, the envelope's shape) and its details.reason.
func expectError(t *testing.T, r *fxtest.Response, status int, code, reason string) {
	t.Helper()
	r.AssertError(status, code)
	var d struct {
		Reason string `json:"reason"`
	}
	if env := r.Envelope(); len(env.Details) > 0 {
		if err := json.Unmarshal(env.Details, &d); err != nil {
			t.Fatalf("details %s: %v", env.Details, err)
		}
	}
	if d.Reason != reason {
		t.Fatalf("reason %q, want %q (%s)", d.Reason, reason, r.Body)
	}
}
