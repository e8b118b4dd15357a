//go:build unix

package conn

import "syscall"

// NofileLimit is the soft RLIMIT_NOFILE, the most descriptors the process
// may have open (0 if it cannot be read, or is unlimited): the connection
// limit's budget, and fx's bound on the descriptors socket activation may
// pass (activation.go).
func NofileLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	cur := uint64(rl.Cur) // rl.Cur is int64 on some BSDs, uint64 here
	if cur == ^uint64(0) {
		return 0
	}
	return cur
}
