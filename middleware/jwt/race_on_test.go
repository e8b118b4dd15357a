//go:build race

package jwt_test

// raceEnabled: the race detector slows verification about tenfold, so
// flood tests send fewer tokens (still several times the cache's size).
const raceEnabled = true
