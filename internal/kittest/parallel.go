package kittest

import (
	"flag"
	"os"
	"runtime"
	"strconv"
)

// WaitingParallel raises go test's -parallel to 8 (GOMAXPROCS when that
// is more) unless -parallel is given on the command line, FX_SLOW_TESTS
// is set or the race detector is on. Call it from TestMain, after
// flag.Parse, in a package whose parallel tests mostly wait on sockets,
// timers and deadlines rather than compute: the default, GOMAXPROCS,
// leaves a two-core machine's CPU idle while two of them wait, and the
// README's `go test ./...` pays for it. Under FX_SLOW_TESTS (as .ci/run
// runs the tests) and under the race detector, whose slowdown several
// timing tests' bounds cannot absorb with more of them at once, the
// default stands.
func WaitingParallel() {
	if os.Getenv("FX_SLOW_TESTS") != "" || raceEnabled || flagGiven("test.parallel") {
		return
	}
	_ = flag.Set("test.parallel", strconv.Itoa(max(8, runtime.GOMAXPROCS(0))))
}

// flagGiven reports whether the named flag was set on the command line.
func flagGiven(name string) (given bool) {
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
