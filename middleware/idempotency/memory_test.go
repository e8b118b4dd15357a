package idempotency_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

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
