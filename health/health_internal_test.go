package health

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
)

// Requests that arrive while a probe's run is in flight wait for it and
// share its result: a flood of /readyz costs one run of each check. (The
// hook makes the interleaving deterministic: every joiner is known to be
// waiting before the check is released.)
func TestHealthConcurrentRequestsShareOneRun(t *testing.T) {
	h := New()
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	h.AddReadiness("db", func(context.Context) error {
		if calls.Add(1) == 1 {
			close(entered)
		}
		<-release
		return nil
	})
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	const joiners = 5
	joined := make(chan struct{}, joiners)
	testHookJoin = func() { joined <- struct{}{} }
	t.Cleanup(func() { testHookJoin = nil })

	runs := make([]*healthRun, joiners+1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); runs[0] = h.evaluate(&h.read, logger) }()
	<-entered
	for i := 1; i <= joiners; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); runs[i] = h.evaluate(&h.read, logger) }()
	}
	for range joiners {
		<-joined
	}
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("check ran %d times for %d concurrent requests, want 1", n, joiners+1)
	}
	for i, r := range runs {
		if r != runs[0] || r.results[0].Status != "ok" {
			t.Errorf("request %d: run %p %+v, want the shared run %p", i, r, r.results, runs[0])
		}
	}
	// The next request, after the run ended, runs the checks again.
	if r := h.evaluate(&h.read, logger); r == runs[0] || calls.Load() != 2 {
		t.Errorf("a later request reused the finished run (calls %d)", calls.Load())
	}
}
