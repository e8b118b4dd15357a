//go:build !unix

package fx

import (
	"errors"
	"os"
	"syscall"
)

// spawn cannot pass listening sockets to a new process here: the hand-off
// (handoff.go) is Unix only.
func spawn(exe string, env []string, socks []syscall.Conn, ready *os.File) (*os.Process, error) {
	return nil, errors.ErrUnsupported
}
