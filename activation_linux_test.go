//go:build linux

package fx_test

import (
	"syscall"
	"testing"

	"github.com/fxhq/fx/internal/deploytest"
)

func TestDeploySocketActivation(t *testing.T) {
	d := startDeploy(t, "activation")
	d.run(t, func(i int) {
		d.Replace(t)
		old := d.PID(t)
		syscall.Kill(old, syscall.SIGTERM)
		deploytest.WaitGone(t, old)
		d.start(t)
	})
	d.requireClean(t)
}
