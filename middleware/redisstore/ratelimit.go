package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/fxhq/fx/middleware/ratelimit"
	"github.com/redis/go-redis/v9"
)

// Defaults of RateLimitStoreConfig (and, but for the prefix, of
// IdempotencyStoreConfig).
const (
	DefaultRateLimitPrefix  = "fx:ratelimit:"
	DefaultTimeout          = 100 * time.Millisecond
	DefaultFailureThreshold = 3
	DefaultProbeInterval    = 250 * time.Millisecond
)

// RateLimitStoreConfig configures NewRateLimitStore.
type RateLimitStoreConfig struct {
	// Prefix starts every key the store writes. Default "fx:ratelimit:".
	Prefix string

	// Timeout bounds how long one decision waits for Redis, retries and
	// reconnections of the client included; the call then fails (and the
	// request is answered as ratelimit.Config.FailOpen says). Default
	// DefaultTimeout (100 ms: a decision takes well under a millisecond
	// on a healthy network). Negative: the store sets no deadline of its
	// own, and the request's context and the client's options decide.
	//
	// It holds whatever the client's options: when the client does not
	// pass context deadlines to its sockets (go-redis's
	// ContextTimeoutEnabled is false, the default), the call runs on a
	// goroutine of its own that the store stops waiting for at the
	// deadline; the goroutine ends when the client's ReadTimeout does.
	Timeout time.Duration

	// FailureThreshold is how many calls in a row must fail (time out, or
	// find no connection) to open the circuit: from then on Allow returns
	// ErrUnavailable at once, without waiting for Redis, until a probe
	// gets an answer. A call cancelled by its request's
	// own context does not count; one whose deadline (the store's or the
	// caller's) passed does. Default DefaultFailureThreshold (3).
	// Negative: no circuit breaker, every call goes to Redis.
	FailureThreshold int

	// ProbeInterval is how often, while the circuit is open, a call goes
	// to Redis as the probe (the request's own call, bounded by Timeout;
	// one at a time), and is answered with what Redis answers: the call
	// that finds Redis back is served, and closes the circuit. Default
	// DefaultProbeInterval (250 ms): the store notices a recovered Redis
	// within about this long, if requests keep coming.
	ProbeInterval time.Duration

	// Logger receives one line when the circuit opens (level Warn,
	// state=open, with the last error) and one when it closes (level
	// Info, state=closed, with how long it was open); never a line per
	// refused call. Nil: slog.Default().
	Logger *slog.Logger
}

// RateLimitStore is a ratelimit.Store on Redis: it stores the rate-limit
// counters (each key's theoretical arrival time). It is safe for
// concurrent use.
type RateLimitStore struct {
	client redis.Scripter
	prefix string
	guard  // the deadline and circuit breaker of every call
}

// NewRateLimitStore returns a RateLimitStore that runs its script through client (a
// *redis.Client, *redis.ClusterClient, *redis.Ring or any other
// redis.Scripter). It does not close the client.
func NewRateLimitStore(client redis.Scripter, cfg RateLimitStoreConfig) *RateLimitStore {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultRateLimitPrefix
	}
	s := &RateLimitStore{client: client, prefix: cfg.Prefix}
	s.guard = newGuard(client, cfg)
	return s
}

// gcra is the decision. KEYS[1] holds the key's theoretical arrival time
// (TAT) in microseconds of Redis's clock; ARGV[1] is the emission interval
// T and ARGV[2] the tolerance Burst*T, both in microseconds. It answers
// {allowed (0/1), remaining, retry after µs, reset µs}. The numbers stay
// below 2^53, where Lua's doubles are exact integers; stored values are
// formatted with %.0f because tostring would print them in exponent form.
//
// It is the algorithm of ratelimit.MemoryStore (package ratelimit's
// limit.go explains it), in Lua because it must run inside Redis to be atomic.
var gcra = redis.NewScript(`
if redis.replicate_commands then redis.replicate_commands() end
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
local t = tonumber(ARGV[1])
local tau = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new = tat + t
local allow_at = new - tau
if now < allow_at then
  return {0, 0, allow_at - now, tat - now}
end
redis.call('SET', KEYS[1], string.format('%.0f', new), 'PX', math.ceil((new - now) / 1000))
local slack = now - allow_at
local r = math.floor(slack / t)
if r * t > slack then r = r - 1 end
return {1, r, 0, new - now}
`)

// maxTolerance bounds the script's arithmetic: the current time in
// microseconds (below 2^52 until the year 2112) plus a tolerance of at most
// 2^51 µs stays below 2^53, so Lua's doubles hold every value exactly.
const maxTolerance = 1 << 51

// Allow implements ratelimit.Store: one script run, atomic in Redis,
// waiting at most RateLimitStoreConfig.Timeout. An invalid limit or a tolerance
// (Burst*Period/Requests) over 2^51 µs (71 years) is an error, as is any
// failure to reach Redis in time; while the circuit is open (see
// RateLimitStoreConfig.FailureThreshold) the error is ErrUnavailable, returned at once.
func (s *RateLimitStore) Allow(ctx context.Context, key string, limit ratelimit.Limit) (ratelimit.Decision, error) {
	l, err := limit.Validate()
	if err != nil {
		return ratelimit.Decision{}, err
	}
	t := int64(l.Interval() / time.Microsecond)
	if t < 1 || int64(l.Burst) > maxTolerance/t {
		return ratelimit.Decision{}, fmt.Errorf("redisstore: limit %q: Burst*Period/Requests must be between 1µs and 2^51µs", l.Name)
	}
	var res []int64
	err = s.do(ctx, func(ctx context.Context) (err error) {
		res, err = gcra.Run(ctx, s.client, []string{s.prefix + l.Name + ":" + key}, t, t*int64(l.Burst)).Int64Slice()
		return err
	})
	if err == ErrUnavailable {
		return ratelimit.Decision{}, err
	}
	if err != nil {
		return ratelimit.Decision{}, fmt.Errorf("redisstore: %w", err)
	}
	if len(res) != 4 {
		return ratelimit.Decision{}, fmt.Errorf("redisstore: script answered %d values, want 4", len(res))
	}
	return ratelimit.Decision{
		Allowed:    res[0] == 1,
		Remaining:  int(min(res[1], math.MaxInt32)),
		RetryAfter: time.Duration(res[2]) * time.Microsecond,
		Reset:      time.Duration(res[3]) * time.Microsecond,
	}, nil
}

var _ ratelimit.Store = (*RateLimitStore)(nil)
