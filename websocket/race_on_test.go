//go:build race

package websocket_test

// raceEnabled: the race detector makes sync.Pool drop items at random and
// slows the peers down, so allocation counts are not meaningful under
// -race.
const raceEnabled = true
