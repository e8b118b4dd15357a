//go:build !race

package kittest

// raceEnabled: see race_on.go.
const raceEnabled = false
