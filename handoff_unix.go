//go:build unix

package fx

import (
	"os"
	"syscall"
)

// spawn starts exe with the same arguments, env, this process's standard
// input, output and error as descriptors 0-2, the sockets of socks from
// descriptor 3 on, and ready after them (handoff.go).
//
// It forks with syscall.ForkExec and the raw descriptors rather than
// os/exec's ExtraFiles: os/exec takes each file's Fd, which puts the
// descriptor in blocking mode, and a duplicate of a socket shares that
// mode with the original. The old process's accept would then block in
// the kernel, and its listener's Close, waiting for that accept, would
// hang the drain until some client connected. Each socket's descriptor is
// used inside its RawConn.Control, so none can be closed (and its number
// reused) while the new process is started.
func spawn(exe string, env []string, socks []syscall.Conn, ready *os.File) (*os.Process, error) {
	fds := []uintptr{0, 1, 2}
	var pid int
	var forkErr error
	var next func(i int) error
	next = func(i int) error {
		if i == len(socks) {
			readyFD, err := ready.SyscallConn()
			if err != nil {
				return err
			}
			if err := readyFD.Control(func(fd uintptr) {
				pid, forkErr = syscall.ForkExec(exe, os.Args, &syscall.ProcAttr{Env: env, Files: append(fds, fd)})
			}); err != nil {
				return err
			}
			return forkErr
		}
		rc, err := socks[i].SyscallConn()
		if err != nil {
			return err
		}
		var inner error
		if err := rc.Control(func(fd uintptr) {
			fds = append(fds, fd)
			inner = next(i + 1)
		}); err != nil {
			return err
		}
		return inner
	}
	if err := next(0); err != nil {
		return nil, err
	}
	return os.FindProcess(pid)
}
