package redisstore

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// ErrUnavailable is what Allow returns, without asking Redis, while the
// circuit is open: the last Config.FailureThreshold calls in a row failed
// and no background probe has got an answer since. middleware.RateLimit
// then answers as FailOpen says (by default 503 FX_SERVICE_UNAVAILABLE).
var ErrUnavailable = errors.New("redisstore: Redis did not answer the last calls; not waiting for it until a probe does (circuit open)")

// breaker is the circuit breaker in front of Redis.
//
// Closed, every call goes to Redis; threshold failures in a row open it.
// Open, calls fail at once with ErrUnavailable, and the first call at
// least interval after the last probe starts one probe in the background
// (probing guards that only one runs); the probe that gets an answer
// closes it. Opening and closing are each logged once, by the goroutine
// whose CompareAndSwap made the change. Probes are started by calls, so
// an idle store runs no goroutine.
//
// Cost per call while closed: two atomic loads (and a store after a
// failure or the first success after one).
type breaker struct {
	threshold int32
	interval  time.Duration
	logger    *slog.Logger
	probe     func(context.Context) error

	open      atomic.Bool
	failures  atomic.Int32 // consecutive failed calls while closed
	openedAt  atomic.Int64 // UnixNano of the last opening
	nextProbe atomic.Int64 // UnixNano before which no probe starts
	probing   atomic.Bool
}

// ready reports whether a call may go to Redis. While open it answers
// false and starts a probe when one is due.
func (b *breaker) ready() bool {
	if b == nil || !b.open.Load() {
		return true
	}
	if now := time.Now().UnixNano(); now >= b.nextProbe.Load() && b.probing.CompareAndSwap(false, true) {
		go b.runProbe()
	}
	return false
}

// success records a call Redis answered.
func (b *breaker) success() {
	if b != nil && b.failures.Load() != 0 {
		b.failures.Store(0)
	}
}

// failure records a call Redis did not answer, and opens the circuit at
// the threshold.
func (b *breaker) failure(err error) {
	if b == nil {
		return
	}
	n := b.failures.Add(1)
	if n < b.threshold || !b.open.CompareAndSwap(false, true) {
		return
	}
	now := time.Now()
	b.openedAt.Store(now.UnixNano())
	b.nextProbe.Store(now.Add(b.interval).UnixNano())
	b.logger.LogAttrs(context.Background(), slog.LevelWarn,
		"redisstore: Redis is not answering; refusing at once and probing in the background",
		slog.String("state", "open"), slog.Int("failures", int(n)), slog.Any("error", err))
}

// runProbe is one probe; it closes the circuit when Redis answers.
func (b *breaker) runProbe() {
	defer b.probing.Store(false)
	if err := b.probe(context.Background()); err != nil {
		b.nextProbe.Store(time.Now().Add(b.interval).UnixNano())
		return
	}
	b.failures.Store(0)
	if b.open.CompareAndSwap(true, false) {
		down := time.Duration(time.Now().UnixNano() - b.openedAt.Load())
		b.logger.LogAttrs(context.Background(), slog.LevelInfo, "redisstore: Redis answers again; circuit closed",
			slog.String("state", "closed"), slog.Duration("down", down))
	}
}
