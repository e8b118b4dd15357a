package redisstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/redistest"
	"github.com/fxhq/fx/middleware/idempotency"
)

// waitReplay retries key on app until the answer is a replay (the
// background completion landed), for up to 5 s.
func waitReplay(t *testing.T, app *fx.App, key, body string) idemResult {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := post(app, key, body)
		if r.replayed == "true" || time.Now().After(deadline) {
			return r
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// With CompleteAfterResponse on Redis, the response is stored in the
// background and a retry gets it replayed: the handler ran once.
func TestIdempotencyCompleteAfterResponseReplays(t *testing.T) {
	srv := redistest.Start(t)
	var runs atomic.Int64
	app := idemApp(t, srv.Addr, idempotency.Config{ShareAnonymous: true, CompleteAfterResponse: true}, &runs, nil)
	first := post(app, "order-7", `{"item":"book"}`)
	if first.status != 201 || first.replayed != "" {
		t.Fatalf("first: %+v", first)
	}
	r := waitReplay(t, app, "order-7", `{"item":"book"}`)
	if r.status != 201 || r.replayed != "true" || r.body != first.body || r.loc != first.loc || runs.Load() != 1 {
		t.Fatalf("retry: %+v (first %+v), handler ran %d times", r, first, runs.Load())
	}
	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
}

// The weakened window, on a real Redis: Redis stops taking writes (CLIENT
// PAUSE WRITE) while the handler answers. The response is not held by the
// completion, which fails at StoreTimeout; the claim then stays until
// LockTimeout (a retry is 409), after which a retry runs the handler once
// more and that run's response is replayed.
func TestIdempotencyCompleteAfterResponseFailureExpires(t *testing.T) {
	srv := redistest.Start(t)
	var runs atomic.Int64
	gate := make(chan struct{})
	const storeTimeout, pause, lock = 300 * time.Millisecond, 900 * time.Millisecond, 2 * time.Second
	app := idemApp(t, srv.Addr, idempotency.Config{ShareAnonymous: true, CompleteAfterResponse: true, StoreTimeout: storeTimeout, LockTimeout: lock}, &runs, gate)
	answered := make(chan time.Time, 1)
	var first idemResult
	go func() { first = post(app, "order-9", `{}`); answered <- time.Now() }()
	for runs.Load() == 0 { // the claim is taken, the handler waits on gate
		time.Sleep(time.Millisecond)
	}
	admin := idemClient(t, srv.Addr)
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", pause.Milliseconds(), "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	close(gate)
	if took := (<-answered).Sub(paused); took >= storeTimeout {
		t.Fatalf("the response took %v: it waited for the completion", took)
	}
	if first.status != 201 {
		t.Fatalf("first: %+v", first)
	}
	time.Sleep(time.Until(paused.Add(pause + 50*time.Millisecond)))
	if r := post(app, "order-9", `{}`); r.status != 409 || r.code != fx.CodeIdempotencyInFlight {
		t.Fatalf("retry before LockTimeout: %+v (want 409: the failed completion left the claim)", r)
	}
	time.Sleep(time.Until(paused.Add(lock + 100*time.Millisecond)))
	second := post(app, "order-9", `{}`)
	if second.status != 201 || second.replayed != "" || runs.Load() != 2 {
		t.Fatalf("retry after LockTimeout: %+v, handler ran %d times (want 2)", second, runs.Load())
	}
	if r := waitReplay(t, app, "order-9", `{}`); r.replayed != "true" || r.body != second.body || runs.Load() != 2 {
		t.Fatalf("later retry: %+v, handler ran %d times", r, runs.Load())
	}
	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
}
