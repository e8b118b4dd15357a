package idempotency_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx/middleware/idempotency"
)

// gatedStore is a MemoryStore whose Complete waits for gate to close,
// telling entered when it starts: a store whose completion is slow.
type gatedStore struct {
	*idempotency.MemoryStore
	gate    chan struct{}
	entered chan struct{}
	keys    chan string // the keys Complete was called with
}

func newGatedStore() *gatedStore {
	return &gatedStore{
		MemoryStore: idempotency.NewMemoryStore(idempotency.MemoryStoreConfig{}),
		gate:        make(chan struct{}), entered: make(chan struct{}, 16), keys: make(chan string, 16),
	}
}

func (s *gatedStore) Complete(ctx context.Context, key string, token uint64, resp idempotency.Response, lifetime time.Duration) error {
	s.keys <- key
	s.entered <- struct{}{}
	<-s.gate
	return s.MemoryStore.Complete(ctx, key, token, resp, lifetime)
}

// returnsWithin reports whether f returns within d (f keeps running if not).
func returnsWithin(d time.Duration, f func()) (done <-chan struct{}, ok bool) {
	ch := make(chan struct{})
	go func() { f(); close(ch) }()
	select {
	case <-ch:
		return ch, true
	case <-time.After(d):
		return ch, false
	}
}

// closeOnce closes ch unless it is closed (the tests run sequentially).
func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// waitEntered waits for the gated store's next Complete to start.
func waitEntered(t *testing.T, s *gatedStore) {
	t.Helper()
	select {
	case <-s.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("Complete never started")
	}
}

// With CompleteAfterResponse the response does not wait for the store's
// Complete; a retry while it is pending is 409, and once it landed the
// retry is the replay: the handler ran once.
func TestCompleteAfterResponse(t *testing.T) {
	var runs atomic.Int64
	store := newGatedStore()
	app := orderApp(t, &runs, idempotency.New(idempotency.Config{ShareAnonymous: true, Store: store, CompleteAfterResponse: true}))
	t.Cleanup(func() { closeOnce(store.gate) })
	var first result
	done, ok := returnsWithin(2*time.Second, func() { first = do(app, "POST", "/orders/a", "k1", `{"qty":1}`) })
	if !ok {
		closeOnce(store.gate)
		<-done
		t.Fatal("the response waited for the store's Complete")
	}
	if first.status != 201 || first.replayed != "" {
		t.Fatalf("first: %+v", first)
	}
	waitEntered(t, store)
	if r := do(app, "POST", "/orders/a", "k1", `{"qty":1}`); r.status != 409 || r.code != "FX_IDEMPOTENCY_IN_FLIGHT" {
		t.Fatalf("retry while the completion is pending: %+v", r)
	}
	closeOnce(store.gate)
	if err := app.Shutdown(); err != nil { // drains the completion
		t.Fatal(err)
	}
	again := do(app, "POST", "/orders/a", "k1", `{"qty":1}`)
	if again.status != 201 || again.replayed != "true" || again.body != first.body || again.loc != first.loc {
		t.Fatalf("retry: %+v, first %+v", again, first)
	}
	if runs.Load() != 1 {
		t.Fatalf("handler ran %d times, want 1", runs.Load())
	}
}

// MaxPendingCompletions bounds the background completions: with its one
// slot taken, the next request completes before its response (it waits),
// and nothing is dropped.
func TestCompleteAfterResponseBounded(t *testing.T) {
	t.Parallel() // its own store and App; waits in real time
	var runs atomic.Int64
	store := newGatedStore()
	app := orderApp(t, &runs, idempotency.New(idempotency.Config{ShareAnonymous: true, Store: store, CompleteAfterResponse: true, MaxPendingCompletions: 1}))
	t.Cleanup(func() { closeOnce(store.gate) })
	if _, ok := returnsWithin(2*time.Second, func() { do(app, "POST", "/orders/a", "k1", `{}`) }); !ok {
		t.Fatal("the first response waited for the store's Complete")
	}
	waitEntered(t, store)
	done, ok := returnsWithin(200*time.Millisecond, func() { do(app, "POST", "/orders/a", "k2", `{}`) })
	if ok {
		t.Fatal("the second request did not wait for its Complete although the one background slot was taken")
	}
	waitEntered(t, store)
	closeOnce(store.gate)
	<-done
	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k1", "k2"} {
		if r := do(app, "POST", "/orders/a", k, `{}`); r.replayed != "true" {
			t.Fatalf("%s not stored: %+v", k, r)
		}
	}
}

// The App's Shutdown waits for the pending completions: when it returns,
// the response is stored.
func TestCompleteAfterResponseShutdownDrains(t *testing.T) {
	t.Parallel() // its own store and App; waits in real time
	var runs atomic.Int64
	store := newGatedStore()
	app := orderApp(t, &runs, idempotency.New(idempotency.Config{ShareAnonymous: true, Store: store, CompleteAfterResponse: true}))
	t.Cleanup(func() { closeOnce(store.gate) })
	if _, ok := returnsWithin(2*time.Second, func() { do(app, "POST", "/orders/a", "k1", `{}`) }); !ok {
		t.Fatal("the response waited for the store's Complete")
	}
	waitEntered(t, store)
	done, ok := returnsWithin(200*time.Millisecond, func() {
		if err := app.Shutdown(); err != nil {
			t.Error(err)
		}
	})
	if ok {
		t.Fatal("Shutdown returned while a completion was pending")
	}
	closeOnce(store.gate)
	<-done
	rec, _, _ := store.Get(context.Background(), <-store.keys)
	if rec.State != idempotency.Completed || rec.Response.Status != 201 {
		t.Fatalf("after Shutdown the record is %+v, want the completed 201", rec)
	}
}
