package redisstore

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/fxhq/fx/middleware"
	"github.com/redis/go-redis/v9"
)

// DefaultPrefix is Config.Prefix's default.
const DefaultPrefix = "fx:ratelimit:"

// Config configures New.
type Config struct {
	// Prefix starts every key the store writes. Default "fx:ratelimit:".
	Prefix string
}

// Store is a middleware.Store on Redis. It is safe for concurrent use.
type Store struct {
	client redis.Scripter
	prefix string
}

// New returns a Store that runs its script through client (a
// *redis.Client, *redis.ClusterClient, *redis.Ring or any other
// redis.Scripter). The Store does not close the client.
func New(client redis.Scripter, cfg Config) *Store {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	return &Store{client: client, prefix: cfg.Prefix}
}

// gcra is the decision. KEYS[1] holds the key's theoretical arrival time
// (TAT) in microseconds of Redis's clock; ARGV[1] is the emission interval
// T and ARGV[2] the tolerance Burst*T, both in microseconds. It answers
// {allowed (0/1), remaining, retry after µs, reset µs}. The numbers stay
// below 2^53, where Lua's doubles are exact integers; stored values are
// formatted with %.0f because tostring would print them in exponent form.
//
// It is the algorithm of middleware.MemoryStore (ratelimit.go explains
// it), in Lua because it must run inside Redis to be atomic.
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

// Allow implements middleware.Store: one script run, atomic in Redis. An
// invalid limit or a tolerance (Burst*Period/Requests) over 2^51 µs (71
// years) is an error, as is any failure to reach Redis.
func (s *Store) Allow(ctx context.Context, key string, limit middleware.Limit) (middleware.Decision, error) {
	l, err := limit.Validate()
	if err != nil {
		return middleware.Decision{}, err
	}
	t := int64(l.Interval() / time.Microsecond)
	if t < 1 || int64(l.Burst) > maxTolerance/t {
		return middleware.Decision{}, fmt.Errorf("redisstore: limit %q: Burst*Period/Requests must be between 1µs and 2^51µs", l.Name)
	}
	res, err := gcra.Run(ctx, s.client, []string{s.prefix + l.Name + ":" + key}, t, t*int64(l.Burst)).Int64Slice()
	if err != nil {
		return middleware.Decision{}, fmt.Errorf("redisstore: %w", err)
	}
	if len(res) != 4 {
		return middleware.Decision{}, fmt.Errorf("redisstore: script answered %d values, want 4", len(res))
	}
	return middleware.Decision{
		Allowed:    res[0] == 1,
		Remaining:  int(min(res[1], math.MaxInt32)),
		RetryAfter: time.Duration(res[2]) * time.Microsecond,
		Reset:      time.Duration(res[3]) * time.Microsecond,
	}, nil
}

var _ middleware.Store = (*Store)(nil)
