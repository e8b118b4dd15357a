//go:build !race

package websocket_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
