//go:build race

package fx_test

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts are not meaningful under -race.
const raceEnabled = true
