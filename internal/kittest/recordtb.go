package kittest

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// RecordTB is a testing.TB that records the failures reported to it
// instead of failing, so that a test can show an assertion fails when
// it should, and with what message. Errorf records the message; Fatalf
// records it and ends the calling goroutine (Run runs a test body on a
// goroutine of its own for that); Cleanup keeps f until End; Helper
// does nothing. Every other method goes to the embedded TB (the real
// test; nil in an example, where they panic). It is safe for concurrent
// use.
type RecordTB struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	fatal    bool
	cleanups []func()
}

// Run runs body with r as its t, on a goroutine of its own so that a
// Fatalf ends body and not the caller, and returns when body has. What
// body passed to Cleanup waits for End: several bodies may share a
// client or server one of them made.
func (r *RecordTB) Run(body func(t testing.TB)) {
	alone(func() { body(r) })
}

// End calls the functions passed to Cleanup, last registered first, as
// the testing package does when a test function returns: on a goroutine
// of its own, every one of them even when another calls Fatalf. It
// returns when they have all returned.
func (r *RecordTB) End() { alone(r.runCleanups) }

// alone runs f on a goroutine of its own (runtime.Goexit ends f only)
// and waits for it.
func alone(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// runCleanups calls the last cleanup registered, then (deferred, so
// that a Fatalf in it does not skip them) the others.
func (r *RecordTB) runCleanups() {
	r.mu.Lock()
	n := len(r.cleanups)
	if n == 0 {
		r.mu.Unlock()
		return
	}
	f := r.cleanups[n-1]
	r.cleanups = r.cleanups[:n-1]
	r.mu.Unlock()
	defer r.runCleanups()
	f()
}

// Errors returns the messages of the failures reported so far, in order.
func (r *RecordTB) Errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errors...)
}

// Ended reports whether a Fatalf ended the body.
func (r *RecordTB) Ended() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fatal
}

// Failed reports whether a failure was reported.
func (r *RecordTB) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errors) > 0
}

// Helper does nothing.
func (*RecordTB) Helper() {}

// Cleanup keeps f for End to call.
func (r *RecordTB) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

// Errorf records the failure; the body goes on.
func (r *RecordTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// Fatalf records the failure and ends the calling goroutine (the body's,
// under Run).
func (r *RecordTB) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.mu.Lock()
	r.fatal = true
	r.mu.Unlock()
	runtime.Goexit()
}
