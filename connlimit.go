package fx

import (
	"errors"
	"log/slog"
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// Descriptor budget. Every connection costs the process one file
// descriptor, and RLIMIT_NOFILE bounds them. When accept(2) cannot get one
// it fails with EMFILE; fasthttp treats any non-timeout accept error as
// fatal, so before this guard ~20k idle connections against the default
// config made Serve return and the program exit. The guard has three parts:
//
//   - the default Config.Concurrency is clamped below the limit, so that the
//     connection limit (and its 503 envelope) fires before the kernel does;
//   - the refusals in flight (each a descriptor held while the 503 is
//     written) are bounded by a share of the same budget;
//   - temporary accept errors are retried with a backoff (limitListener.
//     Accept), as net/http does, and never end Serve.
//
// The rule, with N the soft RLIMIT_NOFILE read when the App is created:
// fdReserve (64) descriptors are left to the process (stdio, listeners,
// log files, DNS); of the rest, 3/4 are for served connections, 1/8 for
// refusals in flight (at most 1024) and 1/8 stay free for the
// application's own files and outbound connections. N = 1024 gives
// Concurrency 720; N = 1 048 576 gives the cap DefaultConcurrency. A
// Concurrency set explicitly is not clamped: past the limit, accept
// retries until descriptors free up.

const fdReserve = 64

// descriptorBudget is the soft RLIMIT_NOFILE minus fdReserve, or 0 when the
// platform has no such limit or it is too large to matter.
func descriptorBudget() int {
	n := nofileLimit()
	if n == 0 || n > 1<<30 {
		return 0
	}
	return max(int(n)-fdReserve, 0)
}

// defaultConcurrency is Config.Concurrency's default under the current
// descriptor limit (see above). Cost: one getrlimit system call, at New.
func defaultConcurrency() int {
	b := descriptorBudget()
	if b == 0 {
		return DefaultConcurrency
	}
	return min(max(b*3/4, 8), DefaultConcurrency)
}

// maxRejecting bounds the goroutines (and descriptors) that answer refused
// connections; past it, refused connections are closed without a response
// (under such a flood, writing responses would itself be the attack's
// amplifier, and each would hold a descriptor).
const maxRejecting = 1024

// refusalBudget is the most refusals in flight under the current
// descriptor limit: min(maxRejecting, budget/8), at least 4.
func refusalBudget() int64 {
	b := descriptorBudget()
	if b == 0 {
		return maxRejecting
	}
	return int64(min(max(b/8, 4), maxRejecting))
}

// Accept backoff, as net/http's Server.Serve: 5 ms doubling to 1 s.
const (
	acceptRetryMin = 5 * time.Millisecond
	acceptRetryMax = time.Second
)

// temporaryAcceptError reports whether an accept error is worth retrying:
// descriptor or memory exhaustion, a connection aborted or reset before it
// was accepted, an interrupted call, a listener deadline.
func temporaryAcceptError(err error) bool {
	for _, e := range [...]error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN, syscall.EPROTO} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// acceptLog reports failed accepts at most once per second, with the number
// of failures it kept quiet since the last report (a descriptor-exhausted
// server fails accept hundreds of times a second; logging each would add
// the log's I/O to the overload).
type acceptLog struct {
	logger     *slog.Logger
	last       atomic.Int64 // unix nanoseconds of the last report
	suppressed atomic.Int64
}

func (l *acceptLog) report(err error, retry time.Duration) {
	now := time.Now().UnixNano()
	last := l.last.Load()
	if now-last < int64(time.Second) || !l.last.CompareAndSwap(last, now) {
		l.suppressed.Add(1)
		return
	}
	if l.logger != nil {
		l.logger.Warn("fx: accepting a connection failed; retrying",
			"err", err, "retry_in", retry, "suppressed", l.suppressed.Swap(0))
	}
}

// acceptBackoff waits d before the next accept, or less if done is closed
// (Shutdown does not wait out a backoff).
func acceptBackoff(d time.Duration, done <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	}
}

// nextAcceptDelay is the delay after d: 5 ms, then doubling, at most 1 s.
func nextAcceptDelay(d time.Duration) time.Duration {
	if d == 0 {
		return acceptRetryMin
	}
	return min(2*d, acceptRetryMax)
}
