//go:build race

package validate_test

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts are not deterministic under -race.
const raceEnabled = true
