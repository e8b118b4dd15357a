package kittest

import (
	"fmt"
	"testing"
)

// PrintTB stands for the *testing.T of a test function in a runnable
// example (examples have none): Errorf prints "FAIL: " and the message, so
// that a failing assertion changes the example's output and fails it;
// Fatalf panics; Helper and Cleanup do nothing (an example's cleanups
// would run after its output is compared). Any other method of
// testing.TB panics.
type PrintTB struct{ testing.TB }

// Helper does nothing.
func (PrintTB) Helper() {}

// Cleanup does nothing: f never runs.
func (PrintTB) Cleanup(func()) {}

// Errorf prints the failure to standard output, where the example's
// output comparison sees it.
func (PrintTB) Errorf(format string, args ...any) {
	fmt.Printf("FAIL: "+format+"\n", args...)
}

// Fatalf panics with the failure: the example stops and fails.
func (PrintTB) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}
