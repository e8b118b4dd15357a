package kittest

import (
	"testing"
	"time"
)

// Within returns the value ch delivers, failing the test with what when
// none comes within 10 s: a bound on a test whose behaviour under test is
// broken (a hang), not a timing assertion.
func Within[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("gave up waiting: %s", what)
		panic("unreachable")
	}
}

// Eventually polls cond every 5 ms until it holds, failing the test with
// what when it does not within 5 s: for a state another goroutine
// reaches after the test's last step (an observer run after the
// connection closed, a file removed after the response), a bound on a
// broken behaviour, not a timing assertion.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5s: %s", what)
		}
	}
}
