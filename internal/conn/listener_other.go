//go:build !unix

package conn

// NofileLimit: this platform has no RLIMIT_NOFILE; the connection limit is
// Config.Concurrency alone.
func NofileLimit() uint64 { return 0 }
