package idempotency_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware/idempotency"
)

// A flood of distinct keys never grows the store past its cap: 100,000
// keys, claimed and completed, in a store capped at 10,000.
func TestMemoryStoreBounded(t *testing.T) {
	const keys, limit = 100_000, 10_000
	s := idempotency.NewMemoryStore(idempotency.MemoryStoreConfig{MaxKeys: limit})
	ctx := context.Background()
	resp := idempotency.Response{Status: 201, Body: []byte(`{"id":1}`)}
	for i := range keys {
		key := "k" + strconv.Itoa(i)
		lock := time.Minute
		if i%3 == 2 { // a claim abandoned: it expires at once
			lock = time.Nanosecond
		}
		tok, _, err := s.Claim(ctx, key, idempotency.Fingerprint{1}, lock)
		if err != nil || tok == 0 {
			t.Fatalf("claim %d: %d %v", i, tok, err)
		}
		switch i % 3 {
		case 0: // a stored response
			err = s.Complete(ctx, key, tok, resp, time.Hour)
		case 1: // a failure that releases its claim
			err = s.Release(ctx, key, tok)
		}
		if err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		if n := s.Len(); n > limit {
			t.Fatalf("after %d keys the store holds %d > %d", i+1, n, limit)
		}
	}
	// The newest completed key is still there.
	if rec, ok, _ := s.Get(ctx, "k"+strconv.Itoa(keys-1)); !ok || rec.State != idempotency.Completed {
		t.Fatalf("newest completed key: %+v %v", rec, ok)
	}
}

// Live claims are never evicted: a store full of requests in flight
// refuses new keys with ErrStoreFull rather than forget one.
func TestMemoryStoreFullOfClaims(t *testing.T) {
	s := idempotency.NewMemoryStore(idempotency.MemoryStoreConfig{MaxKeys: 3})
	ctx := context.Background()
	for i := range 3 {
		if _, _, err := s.Claim(ctx, strconv.Itoa(i), idempotency.Fingerprint{}, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Claim(ctx, "new", idempotency.Fingerprint{}, time.Minute); !errors.Is(err, idempotency.ErrStoreFull) {
		t.Fatalf("full of claims: %v", err)
	}
	if _, ok, _ := s.Get(ctx, "0"); !ok {
		t.Fatal("a live claim was evicted")
	}
}

// An expired claim is taken over with a new token; the late finisher's
// Complete and Release fail with ErrFenced and leave the new claim alone.
func TestMemoryStoreFencing(t *testing.T) {
	s := idempotency.NewMemoryStore(idempotency.MemoryStoreConfig{})
	ctx := context.Background()
	fp := idempotency.Fingerprint{7}
	old, _, err := s.Claim(ctx, "k", fp, 10*time.Millisecond)
	if err != nil || old == 0 {
		t.Fatal(old, err)
	}
	if tok, held, _ := s.Claim(ctx, "k", fp, time.Minute); tok != 0 || held.State != idempotency.InFlight || held.Fingerprint != fp {
		t.Fatalf("claim while held: %d %+v", tok, held)
	}
	time.Sleep(20 * time.Millisecond)
	fresh, _, err := s.Claim(ctx, "k", fp, time.Minute)
	if err != nil || fresh == 0 || fresh == old {
		t.Fatalf("takeover: %d (old %d) %v", fresh, old, err)
	}
	late := idempotency.Response{Status: 200, Body: []byte("late")}
	if err := s.Complete(ctx, "k", old, late, time.Hour); !errors.Is(err, idempotency.ErrFenced) {
		t.Fatalf("late Complete: %v", err)
	}
	if err := s.Release(ctx, "k", old); !errors.Is(err, idempotency.ErrFenced) {
		t.Fatalf("late Release: %v", err)
	}
	if err := s.Complete(ctx, "k", fresh, idempotency.Response{Status: 201, Body: []byte("new")}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if rec, _, _ := s.Get(ctx, "k"); rec.State != idempotency.Completed || string(rec.Response.Body) != "new" {
		t.Fatalf("stored: %+v", rec)
	}
}

// A store with the default configuration does not grow with the bytes
// of the responses it stores: 1,000 responses of 128 KiB (125 MiB) leave
// at most DefaultMaxBytes (64 MiB) and a little more on the heap, the
// newest still replayable.
func TestMemoryStoreDefaultBoundedByBytes(t *testing.T) {
	s := idempotency.NewMemoryStore(idempotency.MemoryStoreConfig{})
	ctx := context.Background()
	before := kittest.SettledHeap()
	const n, size = 1000, 128 << 10
	for i := range n {
		key := "k" + strconv.Itoa(i)
		tok, _, err := s.Claim(ctx, key, idempotency.Fingerprint{}, time.Minute)
		if err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
		if err := s.Complete(ctx, key, tok, idempotency.Response{Status: 201, Body: make([]byte, size)}, time.Hour); err != nil {
			t.Fatalf("complete %d: %v", i, err)
		}
	}
	after := kittest.SettledHeap()
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 72<<20 {
		t.Fatalf("the store holds %d MiB of heap after %d responses of %d KiB, want <= 72 MiB", grew>>20, n, size>>10)
	}
	if rec, ok, _ := s.Get(ctx, "k"+strconv.Itoa(n-1)); !ok || len(rec.Response.Body) != size {
		t.Fatal("the newest response was not kept")
	}
	runtime.KeepAlive(s)
}

// The policy at MaxBytes: the oldest completed responses go first; live
// claims are never evicted, so a store full of them refuses a new claim
// (ErrStoreFull); a response that cannot fit is not stored, its claim is
// released (the key is free again) and Complete answers ErrStoreFull; a
// response larger than MaxBytes alone never evicts anything.
func TestMemoryStoreMaxBytesPolicy(t *testing.T) {
	ctx := context.Background()
	s := idempotency.NewMemoryStore(idempotency.MemoryStoreConfig{MaxBytes: 64 << 10})
	claim := func(key string) uint64 {
		t.Helper()
		tok, _, err := s.Claim(ctx, key, idempotency.Fingerprint{}, time.Minute)
		if err != nil {
			t.Fatalf("claim %s: %v", key, err)
		}
		return tok
	}
	body := func(kib int) idempotency.Response {
		return idempotency.Response{Status: 201, Body: make([]byte, kib<<10)}
	}
	for i := range 3 { // three 20 KiB responses: 60 KiB and overheads
		key := "done" + strconv.Itoa(i)
		if err := s.Complete(ctx, key, claim(key), body(20), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Complete(ctx, "done3", claim("done3"), body(20), time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get(ctx, "done0"); ok {
		t.Fatal("the oldest response was kept past MaxBytes")
	}
	for _, key := range []string{"done1", "done2", "done3"} {
		if _, ok, _ := s.Get(ctx, key); !ok {
			t.Fatalf("%s evicted, want only the oldest gone", key)
		}
	}
	if b := s.Bytes(); b > 64<<10 {
		t.Fatalf("Bytes %d > MaxBytes", b)
	}

	// Too large alone: not stored, nothing evicted, the claim released.
	tok := claim("huge")
	if err := s.Complete(ctx, "huge", tok, body(100), time.Hour); !errors.Is(err, idempotency.ErrStoreFull) {
		t.Fatalf("a response over MaxBytes: %v, want ErrStoreFull", err)
	}
	if _, ok, _ := s.Get(ctx, "huge"); ok {
		t.Fatal("the claim of an unstorable response was kept")
	}
	if _, ok, _ := s.Get(ctx, "done1"); !ok {
		t.Fatal("a response over MaxBytes evicted others")
	}

	// Live claims fill the store: completed entries go, claims stay, and
	// then neither a claim nor a response fits.
	s = idempotency.NewMemoryStore(idempotency.MemoryStoreConfig{MaxBytes: 4 << 10})
	var claims []string
	for i := 0; ; i++ {
		key := "live" + strconv.Itoa(i)
		_, _, err := s.Claim(ctx, key, idempotency.Fingerprint{}, time.Minute)
		if errors.Is(err, idempotency.ErrStoreFull) {
			break
		}
		if err != nil || i > 1000 {
			t.Fatalf("claim %d: %v", i, err)
		}
		claims = append(claims, key)
	}
	for _, key := range claims {
		if rec, ok, _ := s.Get(ctx, key); !ok || rec.State != idempotency.InFlight {
			t.Fatalf("live claim %s evicted", key)
		}
	}
	if b := s.Bytes(); b > 4<<10 {
		t.Fatalf("Bytes %d > MaxBytes", b)
	}
}
