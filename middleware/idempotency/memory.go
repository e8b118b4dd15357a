package idempotency

import (
	"context"
	"sync"
	"time"
)

// Defaults of MemoryStoreConfig.
const (
	DefaultMaxKeys  = 65536
	DefaultMaxBytes = 64 << 20 // 64 MiB
)

// entryOverhead is what MemoryStore counts for an entry beyond its key and
// response bytes: the entry, its map slot, the Response and the list
// links, rounded up.
const entryOverhead = 192

// MemoryStoreConfig configures NewMemoryStore.
type MemoryStoreConfig struct {
	// MaxKeys caps how many keys the store holds (in flight and completed
	// together). Default DefaultMaxKeys. See MemoryStore for what happens
	// at the cap.
	MaxKeys int

	// MaxBytes caps the memory the store's entries take: each counts its
	// key, its stored response (body, header names and values) and a fixed
	// overhead of a few hundred bytes. Default DefaultMaxBytes (64 MiB):
	// without it, MaxKeys responses of Config.MaxResponseBytes each could
	// take 64 GiB. See MemoryStore for what happens at the cap.
	MaxBytes int64
}

// MemoryStore is a Store in this process's memory: right for one
// instance, or for tests. Several instances of an app need a shared store
// (the Redis one in github.com/fxhq/fx/middleware/redisstore),
// or each runs a retry that lands on it once more.
//
// It is bounded twice: it never holds more than MaxKeys keys nor more than
// MaxBytes bytes of entries (keys, stored responses and a fixed overhead
// each), whatever keys and responses clients cause. When a new claim or a
// response to store does not fit, it makes room by evicting, in order:
// claims that expired, then the oldest completed responses; a retry of a
// key after it was forgotten runs the handler again, so size the caps for
// what one Config.Lifetime sees. Claims of requests still running are
// never evicted. When nothing evictable is left:
//
//   - a Claim answers ErrStoreFull (the request gets 503, as when a remote
//     store is down);
//   - a Complete does not store the response — the store never exceeds its
//     caps: it releases the claim (a retry runs the handler again) and
//     answers ErrStoreFull, which New logs. A response larger than
//     MaxBytes alone is never stored.
//
// Since New completes or releases every claim when its request ends, live
// claims are at most the requests running at once.
//
// Cost: one clock read, one lock and a map lookup per call; a claim
// allocates its entry (one allocation) and keeps key as given; making room
// evicts in O(1) per entry evicted.
type MemoryStore struct {
	mu       sync.Mutex
	max      int
	maxBytes int64
	bytes    int64 // the size of every entry held
	m        map[string]*memEntry
	claims   memList // in-flight entries, oldest claim first
	done     memList // completed entries, oldest completion first
	seq      uint64  // the last token handed out
}

// memList is an intrusive doubly-linked list of entries.
type memList struct{ head, tail *memEntry }

type memEntry struct {
	key        string
	rec        Record
	token      uint64
	expires    int64 // unix nanoseconds
	size       int64 // what the entry counts in MemoryStore.bytes
	prev, next *memEntry
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore(cfg MemoryStoreConfig) *MemoryStore {
	if cfg.MaxKeys <= 0 {
		cfg.MaxKeys = DefaultMaxKeys
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	return &MemoryStore{max: cfg.MaxKeys, maxBytes: cfg.MaxBytes, m: make(map[string]*memEntry, min(cfg.MaxKeys, 1024))}
}

// Len returns how many keys the store holds, expired ones not yet dropped
// included. It is never more than MaxKeys.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// Bytes returns the size of the entries the store holds, as MaxBytes
// counts it. It is never more than MaxBytes.
func (s *MemoryStore) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
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
	size := entryOverhead + int64(len(key))
	if !s.makeRoom(now, 1, size) {
		return 0, Record{}, ErrStoreFull
	}
	s.seq++
	e := &memEntry{key: key, rec: Record{State: InFlight, Fingerprint: fp}, token: s.seq, expires: now + int64(lock), size: size}
	s.m[e.key] = e
	s.bytes += size
	s.claims.pushBack(e)
	return e.token, Record{}, nil
}

// Complete implements Store. resp is kept as given: the caller must not
// change it afterwards. A response that does not fit (see MemoryStore) is
// not stored: the claim is released and Complete answers ErrStoreFull.
func (s *MemoryStore) Complete(_ context.Context, key string, token uint64, resp Response, lifetime time.Duration) error {
	var full bool
	err := s.withHeld(key, token, func(e *memEntry, now int64) {
		add := responseSize(&resp)
		if !s.makeRoom(now, 0, add) {
			s.remove(e)
			full = true
			return
		}
		s.claims.unlink(e)
		e.rec.State, e.rec.Response = Completed, resp
		e.expires = now + int64(lifetime)
		e.size += add
		s.bytes += add
		s.done.pushBack(e)
	})
	if full {
		return ErrStoreFull
	}
	return err
}

// responseSize is what a stored response counts towards MaxBytes.
func responseSize(r *Response) int64 {
	n := int64(len(r.Body))
	for _, h := range r.Header {
		n += int64(len(h.Name)+len(h.Value)) + 32 // the strings' headers
	}
	return n
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

// makeRoom evicts until keys more keys and size more bytes fit under the
// caps, and reports whether they do. It evicts the oldest claim if it
// expired (claims share one lock time, so the oldest expires first), else
// the oldest completed entry; live claims are kept. O(1) per eviction.
func (s *MemoryStore) makeRoom(now int64, keys int, size int64) bool {
	if size > s.maxBytes {
		return false // never fits: keep what is stored
	}
	for len(s.m)+keys > s.max || s.bytes+size > s.maxBytes {
		switch {
		case s.claims.head != nil && s.claims.head.expires <= now:
			s.remove(s.claims.head)
		case s.done.head != nil:
			s.remove(s.done.head)
		default:
			return false
		}
	}
	return true
}

func (s *MemoryStore) list(e *memEntry) *memList {
	if e.rec.State == Completed {
		return &s.done
	}
	return &s.claims
}

func (s *MemoryStore) remove(e *memEntry) {
	delete(s.m, e.key)
	s.bytes -= e.size
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
