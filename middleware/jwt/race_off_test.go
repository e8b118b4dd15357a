//go:build !race

package jwt_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
