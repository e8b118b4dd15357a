package idempotency

import (
	"context"
	"sync"
	"time"
)

// DefaultMaxKeys is MemoryConfig.MaxKeys's default.
const DefaultMaxKeys = 65536

// MemoryConfig configures NewMemoryStore.
type MemoryConfig struct {
	// MaxKeys caps how many keys the store holds (in flight and completed
	// together). Default DefaultMaxKeys. See MemoryStore for what happens
	// at the cap.
	MaxKeys int
}

// MemoryStore is a Store in this process's memory: right for one
// instance, or for tests. Several instances of an app need a shared store
// (the Redis one in github.com/fxhq/fx/middleware/ratelimit/redisstore),
// or each runs a retry that lands on it once more.
//
// It is bounded: it never holds more than MaxKeys keys, whatever number
// of distinct keys clients send, so its memory is at most MaxKeys stored
// responses (each at most Config.MaxResponseBytes of body). When a new key
// finds the store full, the oldest claim goes if it has expired, else the
// oldest completed response: a retry of that key after it was forgotten
// runs the handler again, so size MaxKeys for the keys one
// Config.Lifetime sees. Claims of requests still running are never
// evicted; when the store holds nothing else, Claim answers ErrStoreFull
// (the request gets 503, as when a remote store is down). Since New
// completes or releases every claim when its request ends, live claims
// are at most the requests running at once.
//
// Cost: one clock read, one lock and a map lookup per call; a claim
// allocates its entry (one allocation) and keeps key as given.
type MemoryStore struct {
	mu     sync.Mutex
	max    int
	m      map[string]*memEntry
	claims memList // in-flight entries, oldest claim first
	done   memList // completed entries, oldest completion first
	seq    uint64  // the last token handed out
}

// memList is an intrusive doubly-linked list of entries.
type memList struct{ head, tail *memEntry }

type memEntry struct {
	key        string
	rec        Record
	token      uint64
	expires    int64 // unix nanoseconds
	prev, next *memEntry
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore(cfg MemoryConfig) *MemoryStore {
	if cfg.MaxKeys <= 0 {
		cfg.MaxKeys = DefaultMaxKeys
	}
	return &MemoryStore{max: cfg.MaxKeys, m: make(map[string]*memEntry, min(cfg.MaxKeys, 1024))}
}

// Len returns how many keys the store holds, expired ones not yet dropped
// included. It is never more than MaxKeys.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// Claim implements Store. ctx is not used: nothing here waits.
func (s *MemoryStore) Claim(_ context.Context, key string, fp Fingerprint, lock time.Duration) (uint64, Record, error) {
	now := time.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.m[key]; e != nil {
		if e.expires > now {
			return 0, e.rec, nil
		}
		s.remove(e)
	}
	if len(s.m) >= s.max && !s.evict(now) {
		return 0, Record{}, ErrStoreFull
	}
	s.seq++
	e := &memEntry{key: key, rec: Record{State: InFlight, Fingerprint: fp}, token: s.seq, expires: now + int64(lock)}
	s.m[e.key] = e
	s.claims.pushBack(e)
	return e.token, Record{}, nil
}

// Complete implements Store. resp is kept as given: the caller must not
// change it afterwards.
func (s *MemoryStore) Complete(_ context.Context, key string, token uint64, resp Response, lifetime time.Duration) error {
	return s.withHeld(key, token, func(e *memEntry, now int64) {
		s.claims.unlink(e)
		e.rec.State, e.rec.Response = Completed, resp
		e.expires = now + int64(lifetime)
		s.done.pushBack(e)
	})
}

// Release implements Store.
func (s *MemoryStore) Release(_ context.Context, key string, token uint64) error {
	return s.withHeld(key, token, func(e *memEntry, _ int64) { s.remove(e) })
}

// Get implements Store.
func (s *MemoryStore) Get(_ context.Context, key string) (Record, bool, error) {
	now := time.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.m[key]; e != nil && e.expires > now {
		return e.rec, true, nil
	}
	return Record{}, false, nil
}

// withHeld runs fn under the lock when token holds key's live claim, and
// answers ErrFenced otherwise.
func (s *MemoryStore) withHeld(key string, token uint64, fn func(e *memEntry, now int64)) error {
	now := time.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[key]
	if e == nil || e.token != token || e.rec.State != InFlight || e.expires <= now {
		return ErrFenced
	}
	fn(e, now)
	return nil
}

// evict removes one entry to make room: the oldest claim if it expired
// (claims share one lock time, so the oldest expires first), else the
// oldest completed entry. Live claims are kept. O(1).
func (s *MemoryStore) evict(now int64) bool {
	if e := s.claims.head; e != nil && e.expires <= now {
		s.remove(e)
		return true
	}
	if e := s.done.head; e != nil {
		s.remove(e)
		return true
	}
	return false
}

func (s *MemoryStore) list(e *memEntry) *memList {
	if e.rec.State == Completed {
		return &s.done
	}
	return &s.claims
}

func (s *MemoryStore) remove(e *memEntry) {
	delete(s.m, e.key)
	s.list(e).unlink(e)
}

func (l *memList) pushBack(e *memEntry) {
	e.prev, e.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = e
	} else {
		l.head = e
	}
	l.tail = e
}

func (l *memList) unlink(e *memEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		l.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

var _ Store = (*MemoryStore)(nil)
