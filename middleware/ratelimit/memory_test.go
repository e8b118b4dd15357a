package ratelimit_test

import (
	"context"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware/ratelimit"
)

// TestMemoryStoreBoundedUnderKeyFlood floods a 1024-key store with 300,000
// distinct keys (an attacker rotating IPv6 /64s, or API key names): the
// store never holds more than 1024 keys, the heap does not grow between
// 30,000 and 300,000 keys, and a key that keeps sending stays counted (its
// exhausted bucket keeps refusing it) all through the flood.
func TestMemoryStoreBoundedUnderKeyFlood(t *testing.T) {
	const maxKeys = 1024
	clk := newFakeClock()
	s := ratelimit.NewMemoryStore(ratelimit.MemoryStoreConfig{MaxKeys: maxKeys, Now: clk.Now})
	lim := ratelimit.Limit{Requests: 1, Period: time.Hour}
	ctx := context.Background()
	allow := func(key string) bool {
		d, err := s.Allow(ctx, key, lim)
		if err != nil {
			t.Fatal(err)
		}
		return d.Allowed
	}
	if !allow("victim") || allow("victim") {
		t.Fatal("the victim's burst of 1 is not enforced")
	}
	var base uint64
	buf := make([]byte, 0, 32)
	for i := range 300_000 {
		buf = strconv.AppendInt(append(buf[:0], "flood-"...), int64(i), 10)
		if !allow(string(buf)) {
			t.Fatalf("fresh key %s refused", buf)
		}
		if i%10 == 9 && allow("victim") {
			t.Fatalf("after %d flood keys the victim was forgotten and got a new burst", i+1)
		}
		if i == 30_000 {
			base = kittest.SettledHeap().HeapInuse
		}
	}
	if n := s.Len(); n > maxKeys {
		t.Fatalf("store holds %d keys, over MaxKeys %d", n, maxKeys)
	}
	// The live heap is the same 1024 entries; allow 256 KiB for the
	// runtime's own noise (the store itself is about 150 KiB).
	if grown := int64(kittest.SettledHeap().HeapInuse) - int64(base); grown > 256<<10 {
		t.Fatalf("heap grew by %d bytes between 30,000 and 300,000 keys", grown)
	}
}

// TestMemoryStoreEvictsIdleKeys checks the other half of the eviction
// rule: a key that stops sending is the one that goes. After 100,000 newer
// keys (about 1,500 per shard against 16 places) the idle, exhausted key
// "a" is forgotten and gets a fresh burst, while Len stays at MaxKeys.
func TestMemoryStoreEvictsIdleKeys(t *testing.T) {
	clk := newFakeClock()
	s := ratelimit.NewMemoryStore(ratelimit.MemoryStoreConfig{MaxKeys: 1024, Now: clk.Now})
	lim := ratelimit.Limit{Requests: 1, Period: time.Hour}
	ctx := context.Background()
	allow := func(key string) bool {
		d, _ := s.Allow(ctx, key, lim)
		return d.Allowed
	}
	if !allow("a") || allow("a") {
		t.Fatal("a's burst of 1 is not enforced")
	}
	for i := range 100_000 {
		allow("k" + strconv.Itoa(i))
	}
	if n := s.Len(); n != 1024 {
		t.Fatalf("Len %d, want 1024 (full)", n)
	}
	if !allow("a") {
		t.Fatal("the idle key a was never evicted")
	}
}

// TestMemoryStoreCopiesKeys passes keys that alias a buffer the caller
// then overwrites, as KeyByIP's do under the net/http adapter (it reuses
// the memory its parsed address lives in). The store must keep copies:
// with the caller's memory as its map key, "client-1"'s entry would turn
// into "client-2" and client-1 would get a fresh burst.
func TestMemoryStoreCopiesKeys(t *testing.T) {
	clk := newFakeClock()
	s := ratelimit.NewMemoryStore(ratelimit.MemoryStoreConfig{Now: clk.Now})
	lim := ratelimit.Limit{Requests: 1, Period: time.Hour}
	ctx := context.Background()
	buf := []byte("client-1")
	view := unsafe.String(unsafe.SliceData(buf), len(buf))
	allow := func(key string) bool {
		d, err := s.Allow(ctx, key, lim)
		if err != nil {
			t.Fatal(err)
		}
		return d.Allowed
	}
	if !allow(view) {
		t.Fatal("client-1 refused")
	}
	copy(buf, "client-2")
	if !allow(view) {
		t.Fatal("client-2 refused")
	}
	if allow("client-1") || allow("client-2") {
		t.Fatal("a client got a second request: the store kept the caller's memory as its key")
	}
}
