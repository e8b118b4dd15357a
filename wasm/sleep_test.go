package wasm_test

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/wasm"
)

// The guests below ask to sleep 30 s. sleepBound is how long a test lets
// such a call (or a Shutdown) take before failing: far under the sleep,
// generous for a loaded 2-core machine and the race detector. It is a
// behavioural bound (the sleep ended early), not a performance timing.
const sleepBound = 10 * time.Second

// doAsync sends a request from another goroutine (which must not call
// t.Fatal); the result arrives on the channel, status -1 on a transport
// error.
func doAsync(app *fx.App, method, target string, body []byte) <-chan result {
	ch := make(chan result, 1)
	go func() {
		resp, err := app.Test(httptest.NewRequest(method, target, bytes.NewReader(body)))
		if err != nil {
			ch <- result{status: -1, body: []byte(err.Error())}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		ch <- result{resp.StatusCode, resp.Header, b}
	}()
	return ch
}

// within waits for ch at most sleepBound.
func within(t *testing.T, what string, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(sleepBound):
		t.Fatalf("%s: still running after %v: the guest's 30 s sleep was not cut short", what, sleepBound)
		return result{}
	}
}

// waitCalls waits until the module has handed n requests to the guest.
func waitCalls(t *testing.T, m *wasm.Module, n uint64) {
	t.Helper()
	for deadline := time.Now().Add(sleepBound); m.Stats().Calls < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the sleeping requests never reached the guest")
		}
	}
}

// TestSleepBoundedByTimeout: a WAT guest calling WASI poll_oneoff with a
// 30 s clock subscription used to hold its request and instance for 30 s
// (wazero sleeps in the host, where the call's deadline cannot interrupt
// it). Now the sleep ends at Config.Timeout: 502, "timed out" in the log,
// the instance discarded, never a late 200 "woke".
func TestSleepBoundedByTimeout(t *testing.T) {
	app, m, logs := mount(t, "sleep", wasm.Config{Timeout: 200 * time.Millisecond, MaxInstances: 1})
	for i := range 2 {
		r := within(t, "sleeping call", doAsync(app, "POST", "/", []byte("c")))
		want502(t, r, "woke", "timed out")
		if s := m.Stats(); s.Discarded != uint64(i+1) || s.Failures != uint64(i+1) || s.Live != s.Idle {
			t.Errorf("after call %d: stats %+v: want the sleeping instance discarded", i+1, s)
		}
	}
	if !strings.Contains(logs.String(), "fx_handle: timed out after 200ms") {
		t.Errorf("log lacks the timeout:\n%s", logs)
	}
	// The pool is healthy afterwards: a call that does not sleep is served
	// by a fresh instance.
	if r := do(t, app, "POST", "/", []byte("x")); r.status != 200 || string(r.body) != "woke" {
		t.Errorf("after the timeouts: %d %s", r.status, r.body)
	}
	if s := m.Stats(); s.Created != 3 || s.Live != 1 || s.Idle != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestSleepOnStdinDoesNotBlock: a poll_oneoff that also waits for stdin is
// not a sleep: wazero polls stdin instead, and the host's guest stdin is
// empty and always ready, so the call answers at once rather than waiting
// for the 30 s clock (nor for input that never comes).
func TestSleepOnStdinDoesNotBlock(t *testing.T) {
	app, m, _ := mount(t, "sleep", wasm.Config{Timeout: 20 * time.Second})
	r := within(t, "stdin poll", doAsync(app, "POST", "/", []byte("s")))
	if r.status != 200 || string(r.body) != "woke" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if s := m.Stats(); s.Failures != 0 || s.Discarded != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestSleepClose: Module.Close while guests sleep (with a Timeout far
// beyond the test) wakes them: each call ends at once as a 502, and no
// instance outlives Close. Close comes as soon as the calls start, often
// before the guest reaches poll_oneoff: under -race this also checks that
// Close waits for the calls to end before closing the runtime (which frees
// the modules' WASI state that a running poll_oneoff reads).
func TestSleepClose(t *testing.T) {
	for range 5 {
		app, m, logs := mount(t, "sleep", wasm.Config{MaxInstances: 2, Timeout: time.Minute})
		calls := []<-chan result{
			doAsync(app, "POST", "/", []byte("c")),
			doAsync(app, "POST", "/", []byte("c")),
		}
		waitCalls(t, m, 2)
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		for _, ch := range calls {
			want502(t, within(t, "call after Close", ch), "woke")
		}
		if s := m.Stats(); s.Live != 0 || s.Idle != 0 || s.Discarded != 2 {
			t.Errorf("stats %+v", s)
		}
		if !strings.Contains(logs.String(), "fx_handle: cancelled") {
			t.Errorf("log lacks the cancellation:\n%s", logs)
		}
	}
}

// TestGoGuestSleep: a Go guest's handler calling time.Sleep(30*time.Second)
// under a 200 ms Timeout answers 502 FX_WASM_ERROR well before the sleep
// would end, the instance is discarded, and the next request is served by
// a fresh instance.
func TestGoGuestSleep(t *testing.T) {
	app, m, logs := goApp(t, wasm.Config{Timeout: 200 * time.Millisecond})
	before := m.Stats()
	want502(t, within(t, "GET /sleep", doAsync(app, "GET", "/sleep", nil)), "woke", "timed out")
	if !strings.Contains(logs.String(), "fx_handle: timed out after 200ms") {
		t.Errorf("log lacks the timeout:\n%s", logs)
	}
	if s := m.Stats(); s.Discarded != before.Discarded+1 || s.Failures != before.Failures+1 {
		t.Errorf("stats %+v -> %+v: want the sleeping instance discarded", before, s)
	}
	if r := do(t, app, "POST", "/users/1/echo", nil); r.status != 201 || r.header.Get("X-Calls") != "1" {
		t.Errorf("after the sleep: %d, X-Calls %q (want a fresh instance)", r.status, r.header.Get("X-Calls"))
	}
}

// TestGoGuestSleepShutdown: App.Shutdown while a Go guest sleeps (with a
// Timeout far beyond the test) is not held by it: the sleep ends at once,
// the request is answered 502 and Shutdown returns.
func TestGoGuestSleepShutdown(t *testing.T) {
	app, m, logs := goApp(t, wasm.Config{Timeout: time.Minute})
	calls := m.Stats().Calls
	call := doAsync(app, "GET", "/sleep", nil)
	waitCalls(t, m, calls+1)
	done := make(chan error, 1)
	go func() { done <- app.Shutdown() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	case <-time.After(sleepBound):
		t.Fatalf("App.Shutdown still waiting after %v: held by the sleeping guest", sleepBound)
	}
	want502(t, within(t, "GET /sleep", call), "woke")
	if !strings.Contains(logs.String(), "fx_handle: cancelled") {
		t.Errorf("log lacks the cancellation:\n%s", logs)
	}
	if s := m.Stats(); s.Live != 0 || s.Discarded != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestSleepInInitializeBounded: an _initialize that sleeps 30 s fails
// Compile at the instantiation bound (the larger of Config.Timeout and
// 5 s) instead of after the sleep.
func TestSleepInInitializeBounded(t *testing.T) {
	bin := fixture(t, "sleepinit")
	done := make(chan error, 1)
	go func() {
		m, err := wasm.Compile(bin, wasm.Config{Timeout: 100 * time.Millisecond, Cache: testCache})
		if m != nil {
			m.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, wasm.ErrInvalidModule) || !strings.Contains(err.Error(), "instantiate: timed out after 5s") {
			t.Errorf("Compile() = %v, want ErrInvalidModule: instantiate timed out after 5s", err)
		}
	case <-time.After(5*time.Second + sleepBound):
		t.Fatal("Compile still running: the sleep in _initialize was not cut short")
	}
}
