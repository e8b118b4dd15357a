package redisstore

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisClock estimates Redis's clock from this process's, so that a claim
// can carry the latest time it may be taken as Redis measures it: app and
// Redis clocks may disagree by more than a call's deadline, so the
// caller's own clock cannot be compared with Redis's TIME directly.
//
// Every claim's reply carries Redis's TIME; a sample taken with a round
// trip r places Redis's clock within ±r/2. A sample replaces the estimate
// when its round trip is at most twice the estimate's, or the estimate is
// over sampleMaxAge old (so a clock step is followed within that long), or
// the estimate refused a claim that arrived in time. The first claim of a
// store measures it with one TIME call first.
//
// On Redis Cluster or a Ring the samples come from several nodes, whose
// clocks are assumed to agree within a few milliseconds (NTP): a node
// further off than a call's deadline has claims refused as late (a 503,
// after which its own reply recalibrates the estimate).
//
// Cost per claim: a lock and a few arithmetic operations.
type redisClock struct {
	mu     sync.Mutex
	offset int64 // Redis's clock minus ours, µs
	rtt    int64 // round trip of the sample behind offset, µs; 0: no sample yet
	at     time.Time
}

// sampleMaxAge is how long an estimate is kept against samples with a
// longer round trip.
const sampleMaxAge = 10 * time.Second

var timeScript = redis.NewScript(`local t = redis.call('TIME') return tonumber(t[1]) * 1000000 + tonumber(t[2])`)

// latest is the latest time, in µs of Redis's clock, at which a call
// bounded by ctx may still take effect: ctx's deadline on Redis's clock.
// 0 (any time) when ctx has no deadline.
func (k *redisClock) latest(ctx context.Context, client redis.Scripter) (int64, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return 0, nil
	}
	k.mu.Lock()
	measured := k.rtt != 0
	k.mu.Unlock()
	if !measured {
		sent := time.Now()
		now, err := timeScript.Run(ctx, client, nil).Int64()
		if err != nil {
			return 0, err
		}
		k.observe(sent, time.Now(), now, true)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return deadline.UnixMicro() + k.offset, nil
}

// observe takes the sample of a call sent at sent, answered at got, whose
// reply says Redis's clock read now (µs); force takes it whatever its
// round trip.
func (k *redisClock) observe(sent, got time.Time, now int64, force bool) {
	if now <= 0 {
		return
	}
	rtt := max(got.Sub(sent).Microseconds(), 1)
	k.mu.Lock()
	defer k.mu.Unlock()
	if force || k.rtt == 0 || rtt <= 2*k.rtt || got.Sub(k.at) > sampleMaxAge {
		k.offset = now - (sent.UnixMicro()+got.UnixMicro())/2
		k.rtt, k.at = rtt, got
	}
}
