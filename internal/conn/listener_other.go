//go:build !unix

package conn

// nofileLimit: this platform has no RLIMIT_NOFILE; the connection limit is
// Config.Concurrency alone.
func nofileLimit() uint64 { return 0 }
