// Package redisstore keeps the kit's middleware state in Redis, so that
// every instance of an app shares it: rate-limit counters
// (NewRateLimitStore, a ratelimit.Store: one limit per key across
// instances) and idempotency records (NewIdempotencyStore, an
// idempotency.Store).
//
//	rdb := redis.NewClient(&redis.Options{Addr: "redis:6379"})
//	app.Use(ratelimit.New(ratelimit.Config{
//		Limit: ratelimit.Limit{Requests: 100, Period: time.Minute},
//		Store: redisstore.NewRateLimitStore(rdb, redisstore.RateLimitStoreConfig{}),
//	}))
//
// NewIdempotencyStore is the Redis store of middleware/idempotency, so that a
// retried request runs its handler at most once across every instance
// (a claim is a SET NX PX with a fencing token; the response is stored
// and the claim released in one script). Its calls go through the same
// deadline and circuit breaker as Allow's (below), and a claim Redis runs
// after its request gave up writes nothing (see IdempotencyStore.Claim).
//
// It is a module of its own (github.com/fxhq/fx/middleware/redisstore)
// so that go-redis is a dependency of the applications that use it only.
//
// # How a decision is made
//
// Each decision is one Lua script, run atomically by Redis (EVALSHA, with
// EVAL when the server does not have it cached yet): it reads the key's
// theoretical arrival time, applies GCRA exactly as ratelimit.MemoryStore
// does, writes the new time back and answers. Nothing is read and then
// written by the app, so concurrent requests through any number of app
// instances never both get the last request: with a burst of L, exactly L
// are allowed.
//
// The clock is Redis's (the TIME command inside the script), never the
// app's: instances whose clocks disagree still share one limit exactly. The
// resolution is a microsecond.
//
// Each key is written with a TTL that ends when its state stops mattering
// (its theoretical arrival time: from then on a missing key and the stored
// one give the same answer), so idle keys vanish on their own and Redis
// holds only keys active within the last Period or so.
//
// Keys are RateLimitStoreConfig.Prefix + Limit.Name + ":" + the request's key. One key
// per call, so it works on Redis Cluster.
//
// Cost: one round trip to Redis per request; the script itself is a
// handful of Lua operations. BenchmarkAllow (go test -run '^$' -bench
// Allow -benchmem, needs redis-server) measures 40-120 µs over loopback on
// a shared, loaded 2-core machine; 23 allocations (1,034 bytes) with a
// client that has ContextTimeoutEnabled, most of them go-redis building
// the command and reading the reply, 7 the deadline (its timer context
// and the call's closure); 26 (1,215 bytes) with go-redis's default
// options, where the store also runs the call on a goroutine of its own to
// bound it (RateLimitStoreConfig.Timeout). Set ContextTimeoutEnabled to save that. Requires Redis 5 or later (for a
// script writing after TIME).
//
// # When Redis is down
//
// When Redis cannot be reached, Allow returns an error and
// ratelimit.Config.FailOpen decides: by default the request is
// answered 503 FX_SERVICE_UNAVAILABLE. Two things keep that answer fast:
//
//   - every call waits at most RateLimitStoreConfig.Timeout (default 100 ms), whatever
//     the client's own timeouts and retries (go-redis's defaults alone can
//     hold a request for seconds: 3 retries with backoff, 3 s reads);
//   - a circuit breaker: after FailureThreshold failures in a row
//     (default 3) Allow returns ErrUnavailable at once, without touching
//     Redis, but for one call every ProbeInterval (default 250 ms):
//     that call goes to Redis as the probe (one at a time), and is
//     answered with what Redis answers; the first probe that gets an
//     answer is served and closes the circuit (the request that finds
//     Redis back is not refused). Opening and closing are logged once each (Logger),
//     never once per refused request.
//
// Measured on loopback with a client on go-redis's default options
// (TestRedisDownFailsFast, TestRedisHungFailsFast): Redis killed, the
// first 503 comes after 100 ms (the deadline cuts go-redis's retry
// backoff; it took 1.76 s without it), and from the fourth request on
// each refusal takes microseconds; Redis stopped with SIGSTOP (nothing
// answers), also 100 ms (10 s without the deadline). After Redis
// restarts, requests are allowed again within 150-260 ms.
package redisstore
