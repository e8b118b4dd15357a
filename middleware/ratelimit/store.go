package ratelimit

import (
	"context"
	"time"
)

// Decision is a Store's answer for one request.
type Decision struct {
	// Allowed reports whether the request may go on; when true the store
	// has counted it.
	Allowed bool
	// Remaining is how many more requests the key may send right now (the
	// "r" of the RateLimit header). 0 when refused.
	Remaining int
	// RetryAfter is how long until the key may send one request again; 0
	// when allowed.
	RetryAfter time.Duration
	// Reset is how long until the key's whole Burst is available again.
	Reset time.Duration
}

// Store holds the state of rate-limit keys. Allow decides one request of
// key under limit and, when it allows it, counts it, atomically: two
// concurrent calls for one key never both get the last request.
//
// key may alias request memory valid only during the call: a Store that
// keeps it must copy it. Keys of different limits (Limit.Name) are
// separate. limit has passed validation: Requests, Period and Burst are
// positive and Name is set. An error means the store could not decide (a
// Redis that is down); Config.FailOpen says what happens then.
//
// Cost per call: NewMemoryStore's is a hash, a clock read, one shard lock
// and a map lookup, with no allocation for a known key. A networked store (the Redis store
// of the module github.com/fxhq/fx/middleware/redisstore) costs
// one round trip running one script.
type Store interface {
	Allow(ctx context.Context, key string, limit Limit) (Decision, error)
}

// localStore is implemented by MemoryStore: it needs no context, which
// saves New the c.Context() it would otherwise create (two
// allocations) per request.
type localStore interface {
	allow(key string, limit Limit) Decision
}
