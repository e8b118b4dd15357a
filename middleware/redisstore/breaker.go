package redisstore

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrUnavailable is what Allow returns, without asking Redis, while the
// circuit is open: the last FailureThreshold calls in a row failed
// and no probe has got an answer since. ratelimit.New
// then answers as FailOpen says (by default 503 FX_SERVICE_UNAVAILABLE).
var ErrUnavailable = errors.New("redisstore: Redis did not answer the last calls; not waiting for it until a probe does (circuit open)")

// breaker is the circuit breaker in front of Redis.
//
// Closed, every call goes to Redis; threshold failures in a row open it.
// Open, calls fail at once with ErrUnavailable, except the first call at
// least interval after the last probe: it goes to Redis itself, as the
// probe (half-open; probing guards that only one runs), and is answered
// with what Redis answers. The probe that gets an answer closes the
// circuit; one that fails keeps it open for another interval. So the
// request that finds Redis back is served, not refused while a probe of
// its own making runs in the background. Opening and closing are each
// logged once, by the goroutine whose CompareAndSwap made the change.
// Probes are calls, so an idle store runs no goroutine.
//
// Cost per call while closed: two atomic loads (and a store after a
// failure or the first success after one).
type breaker struct {
	threshold int32
	interval  time.Duration
	logger    *slog.Logger

	open      atomic.Bool
	failures  atomic.Int32 // consecutive failed calls while closed
	openedAt  atomic.Int64 // UnixNano of the last opening
	nextProbe atomic.Int64 // UnixNano before which no probe starts
	probing   atomic.Bool
}

// admit reports whether a call may go to Redis, and whether it is the
// probe of an open circuit (then the caller reports its outcome with
// probed).
func (b *breaker) admit() (ok, probe bool) {
	if b == nil || !b.open.Load() {
		return true, false
	}
	if now := time.Now().UnixNano(); now >= b.nextProbe.Load() && b.probing.CompareAndSwap(false, true) {
		return true, true
	}
	return false, false
}

// isOpen reports whether the circuit is open (false without a breaker).
func (b *breaker) isOpen() bool { return b != nil && b.open.Load() }

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
		"redisstore: Redis is not answering; refusing at once and probing with a call every interval",
		slog.String("state", "open"), slog.Int("failures", int(n)), slog.Any("error", err))
}

// probed records the outcome of the probe admit let through: answered
// (Redis answered it) closes the circuit; otherwise the next probe is
// due an interval later, unless the call was cancelled by its own
// caller (it says nothing of Redis: the next call probes).
func (b *breaker) probed(answered, cancelled bool) {
	defer b.probing.Store(false)
	if !answered {
		if !cancelled {
			b.nextProbe.Store(time.Now().Add(b.interval).UnixNano())
		}
		return
	}
	b.failures.Store(0)
	if b.open.CompareAndSwap(true, false) {
		down := time.Duration(time.Now().UnixNano() - b.openedAt.Load())
		b.logger.LogAttrs(context.Background(), slog.LevelInfo, "redisstore: Redis answers again; circuit closed",
			slog.String("state", "closed"), slog.Duration("down", down))
	}
}

// guard is what every call to Redis goes through, in both stores: the
// store's deadline (RateLimitStoreConfig.Timeout) and its circuit breaker.
type guard struct {
	timeout time.Duration
	direct  bool     // the client bounds its own socket waits by the context's deadline
	br      *breaker // nil: no circuit breaker
}

// newGuard is the guard cfg describes (its Timeout, FailureThreshold,
// ProbeInterval and Logger, defaults applied) for calls through client.
func newGuard(client redis.Scripter, cfg RateLimitStoreConfig) guard {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.FailureThreshold == 0 {
		cfg.FailureThreshold = DefaultFailureThreshold
	}
	if cfg.ProbeInterval <= 0 {
		cfg.ProbeInterval = DefaultProbeInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	g := guard{timeout: cfg.Timeout, direct: boundsSockets(client)}
	if cfg.FailureThreshold > 0 {
		g.br = &breaker{
			threshold: int32(min(cfg.FailureThreshold, math.MaxInt32)),
			interval:  cfg.ProbeInterval,
			logger:    cfg.Logger,
		}
	}
	return g
}

// do runs call under the deadline, through the breaker: ErrUnavailable at
// once while the circuit is open, but for the call that is its probe; a
// failure that is not the caller's own cancellation counts towards
// opening it (a deadline of the caller's that Redis did not meet counts:
// the idempotency middleware gives each call one as short as the
// store's).
func (g *guard) do(ctx context.Context, call func(context.Context) error) error {
	ok, probe := g.br.admit()
	if !ok {
		return ErrUnavailable
	}
	err := g.bounded(ctx, call)
	cancelled := err != nil && errors.Is(ctx.Err(), context.Canceled) // the request's own cancellation, not Redis's failure
	if probe {
		g.br.probed(err == nil, cancelled)
	}
	if err != nil {
		if !cancelled {
			g.br.failure(err)
		}
		return err
	}
	g.br.success()
	return nil
}

// boundsSockets reports whether client applies a context's deadline to
// its socket reads and writes (go-redis's ContextTimeoutEnabled), so that
// a call needs no goroutine of its own to be bounded.
func boundsSockets(client redis.Scripter) bool {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}

// bounded runs call under the store's Timeout: directly when the client
// honours the deadline itself (or there is none), else on a goroutine
// that is abandoned at the deadline (it finishes when the client gives
// up: its ReadTimeout).
func (g *guard) bounded(ctx context.Context, call func(context.Context) error) error {
	if g.timeout < 0 {
		return call(ctx)
	}
	// A caller's deadline within the Timeout already bounds the call (the
	// idempotency middleware gives each call one): no context of our own.
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > g.timeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.timeout)
		defer cancel()
	}
	if g.direct {
		return call(ctx)
	}
	done := make(chan error, 1)
	go func() { done <- call(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
