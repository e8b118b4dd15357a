package fx_test

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// afterTests are run by TestMain once the package's tests have ended
// (clean-ups of what several tests share).
var afterTests []func()

// TestMain runs more of the package's parallel tests at once than go
// test's default (GOMAXPROCS) when neither -parallel is given nor
// FX_SLOW_TESTS is set: most of them wait on sockets, timers, deadlines
// and lingering closes rather than compute, so on a two-core machine the
// default leaves the CPU idle while two of them wait, and the README's
// `go test ./...` spent most of its time here. Under FX_SLOW_TESTS (as
// .ci/run runs it) and under the race detector, whose slowdown several
// timing tests' bounds cannot absorb with more of them at once, the
// default stands.
func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv("FX_SLOW_TESTS") == "" && !raceEnabled && !flagGiven("test.parallel") {
		flag.Set("test.parallel", strconv.Itoa(max(8, runtime.GOMAXPROCS(0))))
	}
	code := m.Run()
	for _, f := range afterTests {
		f()
	}
	os.Exit(code)
}

// flagGiven reports whether the named flag was set on the command line.
func flagGiven(name string) (given bool) {
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
