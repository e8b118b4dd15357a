//go:build race

package kittest

// raceEnabled reports whether the race detector is on (see
// WaitingParallel).
const raceEnabled = true
