package jwt_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/internal/kittest/jwtkit"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/jwt"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
)

// newHSVerifier is jwtkit.HSVerifier with the cache, clock and leeway fields of
// cfg (the clock defaults to jwtkit.FixedNow).
func newHSVerifier(t testing.TB, cfg jwt.Config) *jwt.Verifier {
	t.Helper()
	cfg.Algorithms = []string{"HS256"}
	cfg.Key = jwtkit.JWTSecret
	cfg.Issuer = jwtkit.Issuer
	cfg.Audience = []string{jwtkit.Audience}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return jwtkit.FixedNow }
	}
	v, err := jwt.NewVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// testClock is a clock the test moves; safe for concurrent reads.
type testClock struct{ ns atomic.Int64 }

func newTestClock(t time.Time) *testClock {
	c := &testClock{}
	c.set(t)
	return c
}
func (c *testClock) now() time.Time  { return time.Unix(0, c.ns.Load()) }
func (c *testClock) set(t time.Time) { c.ns.Store(t.UnixNano()) }

func mustVerify(t *testing.T, v *jwt.Verifier, tok string) *middleware.Principal {
	t.Helper()
	p, err := v.Verify(nil, tok)
	if err != nil || p == nil {
		t.Fatalf("valid token refused: %v", err)
	}
	return p
}

func cacheLen(t *testing.T, v *jwt.Verifier, want int) {
	t.Helper()
	if n, _ := jwt.CacheLen(v); n != want {
		t.Fatalf("cache holds %d entries, want %d", n, want)
	}
}

// TestJWTCacheHitSamePrincipal: a token seen again gets the very Principal
// the first verification built, equal to what an uncached verifier builds.
func TestJWTCacheHitSamePrincipal(t *testing.T) {
	tok := jwtkit.Sign(jwttest.Claims{"roles": []string{"admin", "ops"}, "permissions": "a:read b:write", "tenant_id": "acme"}, nil)
	v := jwtkit.HSVerifier()
	p1 := mustVerify(t, v, tok)
	cacheLen(t, v, 1)
	if p2 := mustVerify(t, v, tok); p2 != p1 {
		t.Fatal("second verification did not come from the cache")
	}
	cacheLen(t, v, 1)
	want := mustVerify(t, newHSVerifier(t, jwt.Config{CacheSize: -1}), tok)
	if !reflect.DeepEqual(p1, want) {
		t.Fatalf("cached principal %+v, uncached %+v", p1, want)
	}
	// A hit allocates nothing (the acceptance bound is 3).
	if n := testing.AllocsPerRun(100, func() { mustVerify(t, v, tok) }); n != 0 {
		t.Fatalf("a cache hit allocates %v times", n)
	}
	if p1.Subject != "user-1" || p1.Tenant != "acme" || !p1.HasRole("ops") || !p1.HasPermission("b:write") {
		t.Fatalf("principal %+v", p1)
	}
}

// TestJWTCacheDisabled: a negative CacheSize verifies every time; a
// negative CacheTTL is a configuration error.
func TestJWTCacheDisabled(t *testing.T) {
	tok := jwtkit.Sign(nil, nil)
	v := newHSVerifier(t, jwt.Config{CacheSize: -1})
	first, second := mustVerify(t, v, tok), mustVerify(t, v, tok)
	if first == second {
		t.Fatal("disabled cache answered from memory")
	}
	if n, c := jwt.CacheLen(v); n != 0 || c != 0 {
		t.Fatalf("disabled cache: %d/%d", n, c)
	}
	if _, err := jwt.NewVerifier(jwt.Config{Algorithms: []string{"HS256"}, Key: jwtkit.JWTSecret, CacheTTL: -time.Second}); err == nil {
		t.Fatal("negative CacheTTL accepted")
	}
	if _, c := jwt.CacheLen(jwtkit.HSVerifier()); c != jwt.DefaultCacheSize {
		t.Fatalf("default capacity %d", c)
	}
	if _, c := jwt.CacheLen(newHSVerifier(t, jwt.Config{CacheSize: 1})); c != 8 {
		t.Fatalf("CacheSize 1: capacity %d, want 8 (one set)", c)
	}
}

// TestJWTCacheExpiry: a cached token stops being accepted exactly when the
// verifier would refuse it: at exp + Leeway, and before nbf - Leeway when
// the clock steps back. Refusals are not cached.
func TestJWTCacheExpiry(t *testing.T) {
	t0 := jwtkit.FixedNow
	exp := t0.Add(time.Minute)
	for _, leeway := range []time.Duration{-1, 30 * time.Second} {
		eff := max(leeway, 0)
		clock := newTestClock(t0)
		v := newHSVerifier(t, jwt.Config{Now: clock.now, Leeway: leeway})
		tok := jwtkit.Sign(jwttest.Claims{"exp": exp.Unix()}, nil)
		p := mustVerify(t, v, tok)
		cacheLen(t, v, 1)
		clock.set(exp.Add(eff - time.Nanosecond))
		if mustVerify(t, v, tok) != p {
			t.Fatalf("leeway %v: not a hit just before exp+leeway", leeway)
		}
		clock.set(exp.Add(eff))
		if _, err := v.Verify(nil, tok); !errors.Is(err, middleware.ErrExpired) {
			t.Fatalf("leeway %v: cached token accepted at exp+leeway: %v", leeway, err)
		}
		clock.set(exp.Add(time.Hour))
		if _, err := v.Verify(nil, tok); !errors.Is(err, middleware.ErrExpired) {
			t.Fatalf("leeway %v: cached token accepted an hour after exp: %v", leeway, err)
		}
	}

	// nbf: refused before, accepted (and cached) after, and refused again
	// if the clock steps back before nbf.
	clock := newTestClock(t0)
	v := newHSVerifier(t, jwt.Config{Now: clock.now, Leeway: -1})
	nbf := t0.Add(100 * time.Second)
	tok := jwtkit.Sign(jwttest.Claims{"nbf": nbf.Unix()}, nil)
	if _, err := v.Verify(nil, tok); !errors.Is(err, middleware.ErrNotYetValid) {
		t.Fatalf("before nbf: %v", err)
	}
	cacheLen(t, v, 0)
	clock.set(nbf)
	p := mustVerify(t, v, tok)
	cacheLen(t, v, 1)
	clock.set(nbf.Add(-time.Second))
	if _, err := v.Verify(nil, tok); !errors.Is(err, middleware.ErrNotYetValid) {
		t.Fatalf("clock stepped back before nbf: cached token accepted: %v", err)
	}
	clock.set(nbf)
	if mustVerify(t, v, tok) != p {
		t.Fatal("entry lost after a refusal")
	}
}

// TestJWTCacheTTL: an entry lives at most CacheTTL, even for a token that
// is valid for longer (or has no exp at all); the token is then verified
// again and its new entry replaces the old one.
func TestJWTCacheTTL(t *testing.T) {
	clock := newTestClock(jwtkit.FixedNow)
	v := newHSVerifier(t, jwt.Config{Now: clock.now, CacheTTL: time.Minute, AllowNoExpiry: true})
	for _, tok := range []string{jwtkit.Sign(nil, nil), jwtkit.Sign(jwttest.Claims{"exp": nil}, nil)} {
		clock.set(jwtkit.FixedNow)
		p1 := mustVerify(t, v, tok)
		clock.set(jwtkit.FixedNow.Add(time.Minute - time.Nanosecond))
		if mustVerify(t, v, tok) != p1 {
			t.Fatal("not a hit within CacheTTL")
		}
		clock.set(jwtkit.FixedNow.Add(time.Minute))
		p2 := mustVerify(t, v, tok)
		if p2 == p1 {
			t.Fatal("entry outlived CacheTTL")
		}
		if mustVerify(t, v, tok) != p2 {
			t.Fatal("re-verified token not cached again")
		}
	}
	cacheLen(t, v, 2)
}

// TestJWTCacheFlood: 100k distinct valid tokens (16k without
// FX_SLOW_TESTS: still four times the cache's capacity, the heap measured
// from twice the capacity on, where an unbounded map would grow by
// ~8k entries, about 9 MiB) leave the cache at its bound, and the heap
// does not grow with the number of tokens.
func TestJWTCacheFlood(t *testing.T) {
	v := jwtkit.HSVerifier()
	_, capacity := jwt.CacheLen(v)
	total := 100_000
	if os.Getenv("FX_SLOW_TESTS") == "" {
		total = 4 * capacity
	}
	if raceEnabled {
		total = 3 * capacity
	}
	first := max(total/5, 2*capacity) // the cache is full by then
	claims := jwttest.Claims{"roles": []string{"admin"}, "tenant_id": "acme"}
	var heapAt [2]uint64
	for i := range total {
		claims["jti"] = strconv.Itoa(i)
		mustVerify(t, v, jwtkit.Sign(claims, nil))
		if i+1 == first || i+1 == total {
			heapAt[min(i+1-first, 1)] = kittest.SettledHeap().HeapAlloc
		}
	}
	n, _ := jwt.CacheLen(v)
	if n > capacity || n < capacity*9/10 {
		t.Fatalf("after %d tokens the cache holds %d entries, capacity %d", total, n, capacity)
	}
	// Between 20k and 100k tokens the table holds the same number of
	// entries of the same size: the heap must not follow the token count
	// (an unbounded map would add ~80k entries, tens of MiB).
	if grow := int64(heapAt[1]) - int64(heapAt[0]); grow > 4<<20 {
		t.Fatalf("heap grew by %d bytes between %d and %d tokens", grow, first, total)
	}
	t.Logf("%d entries of capacity %d; heap %d KiB at %d tokens, %d KiB at %d", n, capacity, heapAt[0]>>10, first, heapAt[1]>>10, total)
}

// tampered returns variants of a valid token that must all be refused:
// same prefix with another signature, truncated, extended, and a payload
// changed under the original signature.
func tampered(t *testing.T, tok string) map[string]string {
	t.Helper()
	last := tok[len(tok)-1]
	flip := byte('A')
	if last == 'A' {
		flip = 'B'
	}
	parts := strings.Split(tok, ".")
	other := strings.Split(jwtkit.Sign(jwttest.Claims{"sub": "admin", "roles": []string{"admin"}}, nil), ".")
	return map[string]string{
		"last signature char": tok[:len(tok)-1] + string(flip),
		"truncated":           tok[:len(tok)-1],
		"extended":            tok + "A",
		"other payload":       parts[0] + "." + other[1] + "." + parts[2],
		"wrong key":           jwtkit.Sign(jwttest.Claims{"jti": "x"}, jwtkit.OtherKey),
	}
}

// TestJWTCacheTampered: a cached token does not make tokens that share
// its prefix (or its signature) acceptable.
func TestJWTCacheTampered(t *testing.T) {
	v := jwtkit.HSVerifier()
	tok := jwtkit.Sign(jwttest.Claims{"jti": "x"}, nil)
	p := mustVerify(t, v, tok)
	for name, bad := range tampered(t, tok) {
		if q, err := v.Verify(nil, bad); err == nil {
			t.Errorf("%s: accepted as %+v", name, q)
		}
	}
	if mustVerify(t, v, tok) != p {
		t.Fatal("original token no longer cached")
	}
	cacheLen(t, v, 1)
}

// TestJWTCacheCollision: with every token forced onto the same hash (and
// so the same set), a lookup still answers only for the very token it
// stored: the bytes are compared, not just the hash.
func TestJWTCacheCollision(t *testing.T) {
	v := newHSVerifier(t, jwt.Config{CacheSize: 8})
	jwt.CacheCollide(v)
	a := jwtkit.Sign(jwttest.Claims{"sub": "alice", "roles": []string{"admin"}}, nil)
	b := jwtkit.Sign(jwttest.Claims{"sub": "bob__"}, nil)
	pa := mustVerify(t, v, a)
	pb := mustVerify(t, v, b)
	if pb == pa || pb.Subject != "bob__" || pb.HasRole("admin") {
		t.Fatalf("colliding token got principal %+v", pb)
	}
	for name, bad := range tampered(t, a) {
		if q, err := v.Verify(nil, bad); err == nil {
			t.Errorf("%s (same hash as a cached token): accepted as %+v", name, q)
		}
	}
	if mustVerify(t, v, a) != pa || mustVerify(t, v, b) != pb {
		t.Fatal("colliding entries not both cached")
	}
	cacheLen(t, v, 2)
}

// TestJWTCacheCopiesToken: Auth passes the token as a view of the
// request's header buffer, which fasthttp reuses; the cache must store a
// copy, or the entry's key would change under it.
func TestJWTCacheCopiesToken(t *testing.T) {
	v := jwtkit.HSVerifier()
	a := jwtkit.Sign(jwttest.Claims{"sub": "alice"}, nil)
	b := jwtkit.Sign(jwttest.Claims{"sub": "bobby"}, nil)
	if len(a) != len(b) {
		t.Fatalf("fixture tokens differ in length: %d, %d", len(a), len(b))
	}
	buf := []byte(a)
	pa, err := jwt.VerifyBytesOf(v, buf)
	if err != nil {
		t.Fatal(err)
	}
	copy(buf, b) // the next request reuses the buffer
	if pb, err := jwt.VerifyBytesOf(v, buf); err != nil || pb.Subject != "bobby" {
		t.Fatalf("second token: %v %+v", err, pb)
	}
	if mustVerify(t, v, a) != pa {
		t.Fatal("first token's entry was changed by reuse of the request buffer")
	}
}

// TestJWTKeyCopied: changing an HMAC secret's bytes after NewJWTVerifier
// changes nothing (so cached and uncached answers cannot disagree).
func TestJWTKeyCopied(t *testing.T) {
	key := bytes.Clone(jwtkit.JWTSecret)
	v, err := jwt.NewVerifier(jwt.Config{
		Algorithms: []string{"HS256"}, Keys: map[string]any{"k1": key}, CacheSize: -1,
		Now: func() time.Time { return jwtkit.FixedNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	tok := signWith(t, jwttest.HS256, jwtkit.JWTSecret, "k1", nil)
	key[0] ^= 0xff
	if _, err := v.Verify(nil, tok); err != nil {
		t.Fatalf("verifier followed a change to the caller's key bytes: %v", err)
	}
}

// TestJWTCacheConcurrent runs lookups, inserts and evictions at once
// (run it with -race): a small cache, more tokens than slots, tampered
// tokens mixed in, once with real hashes and once with all colliding.
// Each worker makes 1,500 lookups under the race detector or with
// FX_SLOW_TESTS=1 (.ci/run sets both), 400 otherwise.
func TestJWTCacheConcurrent(t *testing.T) {
	const tokens, workers = 64, 8
	rounds := 1500
	if os.Getenv("FX_SLOW_TESTS") == "" && !raceEnabled {
		rounds = 400
	}
	good := make([]string, tokens)
	for i := range good {
		good[i] = jwtkit.Sign(jwttest.Claims{"sub": fmt.Sprintf("user-%d", i)}, nil)
	}
	var bad []string
	for _, b := range tampered(t, good[0]) {
		bad = append(bad, b)
	}
	for _, collide := range []bool{false, true} {
		v := newHSVerifier(t, jwt.Config{CacheSize: 16})
		if collide {
			jwt.CacheCollide(v)
		}
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				for r := range rounds {
					i := (r*7 + w*13) % (tokens + len(bad))
					if i >= tokens {
						if p, err := v.Verify(nil, bad[i-tokens]); err == nil {
							errs <- fmt.Errorf("tampered token accepted as %q", p.Subject)
							return
						}
						continue
					}
					p, err := v.Verify(nil, good[i])
					if err != nil || p.Subject != fmt.Sprintf("user-%d", i) {
						errs <- fmt.Errorf("token %d: %v %+v", i, err, p)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("collide=%v: %v", collide, err)
		}
		if n, c := jwt.CacheLen(v); n > c {
			t.Fatalf("%d entries, capacity %d", n, c)
		}
	}
}

// BenchmarkJWTVerify is Verifier.Verify alone (no request), with the
// same token every time: a cache hit, or a full verification without the
// cache.
func BenchmarkJWTVerify(b *testing.B) {
	tok := jwtkit.Sign(jwttest.Claims{"roles": []string{"admin"}, "tenant_id": "acme"}, nil)
	for _, c := range []struct {
		name string
		size int
	}{{"cached", 0}, {"nocache", -1}} {
		b.Run(c.name, func(b *testing.B) {
			v := newHSVerifier(b, jwt.Config{CacheSize: c.size})
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Verify(nil, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
