package client

import (
	"flag"
	"os"
	"testing"

	"github.com/fxhq/fx/internal/kittest"
)

// TestMain runs more of the parallel tests at once than go test's default
// (kittest.WaitingParallel): they wait on servers, retries and deadlines.
func TestMain(m *testing.M) {
	flag.Parse()
	kittest.WaitingParallel()
	os.Exit(m.Run())
}
