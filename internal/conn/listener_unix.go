//go:build unix

package conn

import "syscall"

// nofileLimit is the soft RLIMIT_NOFILE (0 if it cannot be read, or is
// unlimited).
func nofileLimit() uint64 {
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
