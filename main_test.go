package fx_test

import (
	"flag"
	"os"
	"testing"

	"github.com/fxhq/fx/internal/kittest"
)

// afterTests are run by TestMain once the package's tests have ended
// (clean-ups of what several tests share).
var afterTests []func()

// TestMain runs more of the package's parallel tests at once than go
// test's default (kittest.WaitingParallel): most of them wait on sockets,
// timers, deadlines and lingering closes rather than compute, and the
// README's `go test ./...` spent most of its time here (its run went from
// 19 s to 8 s).
func TestMain(m *testing.M) {
	flag.Parse()
	kittest.WaitingParallel()
	code := m.Run()
	for _, f := range afterTests {
		f()
	}
	os.Exit(code)
}
