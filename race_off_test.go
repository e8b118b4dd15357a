//go:build !race

package fx_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
