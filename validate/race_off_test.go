//go:build !race

package validate_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
