package ratelimit

import (
	"context"
	"hash/maphash"
	"strings"
	"sync"
	"time"
)

// DefaultMaxKeys is MemoryStoreConfig.MaxKeys's default.
const DefaultMaxKeys = 1 << 16

// memShards is the number of independently locked shards of a MemoryStore:
// enough that two cores (or sixteen) rarely wait for each other, few enough
// that a store of a handful of keys stays small.
const memShards = 64

// MemoryStoreConfig configures NewMemoryStore.
type MemoryStoreConfig struct {
	// MaxKeys bounds how many keys the store remembers. Default 65536
	// (DefaultMaxKeys); rounded up to a multiple of 64. When it is
	// full, a new key takes the place of the least recently seen key of
	// its shard. That key is usually idle with its TAT passed (forgetting
	// it changes nothing); when it is not, the key it held starts over
	// with a full burst. So under a flood of distinct keys memory stays
	// constant and every key that keeps sending stays counted, as long as
	// MaxKeys is above the number of keys active within one Period.
	MaxKeys int

	// Now is the clock, for tests. Default: the monotonic clock, so a step
	// of the wall clock neither frees nor blocks anyone.
	Now func() time.Time
}

// MemoryStore is the in-process Store: state lives in this process only,
// so behind a load balancer each instance enforces the limit on its own
// (use the Redis store to share one limit). Build it with NewMemoryStore.
//
// It is split into 64 shards by a hash of the key, each with its own lock,
// map and least-recently-seen list, so requests for different keys rarely
// contend and no lock covers the whole store. Memory is bounded by MaxKeys:
// about 190 bytes plus the key's length per key (measured: 204 bytes per
// key with 15-byte keys, so about 13 MiB for a full default store).
//
// Cost of Allow: one hash, one shard lock, a map lookup and a list move:
// no allocation for a key already present, one (the copy of the key) for a
// new one.
type MemoryStore struct {
	seed   maphash.Seed
	now    func() int64
	shards [memShards]memShard
}

// memKey is a map key: the policy and the request's key.
type memKey struct{ policy, key string }

// memEntry is one key's state and its place in the shard's list.
type memEntry struct {
	k          memKey
	tat        int64 // theoretical arrival time, ns on the store's clock
	prev, next int32 // list neighbours (indices into ents), -1 at the ends
}

// memShard is one lock's worth of keys. ents holds up to max entries;
// head is the most recently seen, tail the least.
type memShard struct {
	mu         sync.Mutex
	idx        map[memKey]int32
	ents       []memEntry
	head, tail int32
	max        int32
	_          [64]byte // keep neighbouring shards' locks off this cache line
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore(cfg MemoryStoreConfig) *MemoryStore {
	if cfg.MaxKeys <= 0 {
		cfg.MaxKeys = DefaultMaxKeys
	}
	per := (cfg.MaxKeys + memShards - 1) / memShards
	s := &MemoryStore{seed: maphash.MakeSeed()}
	if cfg.Now != nil {
		s.now = func() int64 { return cfg.Now().UnixNano() }
	} else {
		start := time.Now()
		// Offset by a day so a fresh key's TAT (now) is never near zero.
		s.now = func() int64 { return int64(time.Since(start) + 24*time.Hour) }
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.idx = make(map[memKey]int32)
		sh.head, sh.tail, sh.max = -1, -1, int32(per)
	}
	return s
}

// Allow implements Store; it never fails and ignores ctx.
func (s *MemoryStore) Allow(_ context.Context, key string, limit Limit) (Decision, error) {
	l, err := limit.Validate()
	if err != nil {
		return Decision{}, err
	}
	return s.allow(key, l), nil
}

// Len returns how many keys the store holds (at most MaxKeys rounded up).
func (s *MemoryStore) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += len(sh.idx)
		sh.mu.Unlock()
	}
	return n
}

func (s *MemoryStore) allow(key string, limit Limit) Decision {
	t, tau := limit.interval()
	sh := &s.shards[maphash.String(s.seed, key)%memShards]
	k := memKey{limit.Name, key}
	sh.mu.Lock()
	now := s.now()
	i, ok := sh.idx[k]
	if ok {
		sh.unlink(i)
	} else {
		i = sh.insert(k)
		sh.ents[i].tat = now
	}
	sh.pushFront(i)
	e := &sh.ents[i]
	tat := max(e.tat, now)
	newTat := tat + t
	allowAt := newTat - tau
	if now < allowAt {
		sh.mu.Unlock()
		return Decision{RetryAfter: time.Duration(allowAt - now), Reset: time.Duration(tat - now)}
	}
	e.tat = newTat
	sh.mu.Unlock()
	return Decision{Allowed: true, Remaining: int((now - allowAt) / t), Reset: time.Duration(newTat - now)}
}

// insert returns the index of a new, unlinked entry for k, taking the
// least recently seen entry's place when the shard is full. The key is
// copied: the caller's may alias request memory. (The policy name is a
// Go string from the configuration and is kept as it is.)
func (sh *memShard) insert(k memKey) int32 {
	k.key = strings.Clone(k.key)
	var i int32
	if int32(len(sh.ents)) < sh.max {
		i = int32(len(sh.ents))
		sh.ents = append(sh.ents, memEntry{})
	} else {
		i = sh.tail
		sh.unlink(i)
		delete(sh.idx, sh.ents[i].k)
	}
	sh.ents[i] = memEntry{k: k, prev: -1, next: -1}
	sh.idx[k] = i
	return i
}

func (sh *memShard) unlink(i int32) {
	e := &sh.ents[i]
	if e.prev >= 0 {
		sh.ents[e.prev].next = e.next
	} else {
		sh.head = e.next
	}
	if e.next >= 0 {
		sh.ents[e.next].prev = e.prev
	} else {
		sh.tail = e.prev
	}
	e.prev, e.next = -1, -1
}

func (sh *memShard) pushFront(i int32) {
	e := &sh.ents[i]
	e.prev, e.next = -1, sh.head
	if sh.head >= 0 {
		sh.ents[sh.head].prev = i
	} else {
		sh.tail = i
	}
	sh.head = i
}
