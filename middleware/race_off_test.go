//go:build !race

package middleware_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
