package jwt

import (
	"hash/maphash"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fxhq/fx/middleware"
	gojwt "github.com/golang-jwt/jwt/v5"
)

// The verified-token cache of Verifier.
//
// Why: golang-jwt decodes the header and the claims with encoding/json and
// builds an HMAC (or runs an RSA/ECDSA/EdDSA check) for every token: about
// 6-7 µs and 70 allocations per request for a small HS256 token. A client
// sends the same token for every request until it expires, so the answer
// is remembered.
//
// Cost model: a hit is one maphash of the token, up to cacheWays atomic
// loads, one comparison of the token with the stored copy, one clock read
// and two integer comparisons: about 100 ns and no allocation
// (BenchmarkJWTVerify); Auth through fx then costs about what an API key
// costs. A miss pays that lookup on top of the full verification, and an
// accepted token about four more small allocations (exp and iat, and nbf
// when present, read again as *gojwt.NumericDate; the entry; its copy of
// the token). Refusals are never
// stored, so a token refused now (not yet valid, say) is checked again
// next time and cannot shadow a later valid answer.
//
// Correctness rules, each a bug the cache must not introduce:
//   - A hash collision must never authenticate another token: the key is a
//     64-bit maphash with a per-verifier random seed (an attacker cannot
//     aim tokens at one set), and a hit also compares the whole token with
//     the copy stored in the entry. Equal hashes alone never hit.
//   - A hit is accepted only at instants the verifier itself would accept:
//     from max(nbf, iat) - Leeway up to, not including, exp + Leeway (the
//     bounds golang-jwt applies), and never later than CacheTTL after the
//     token was verified. The lower bound matters when the clock steps
//     back.
//   - The stored token is a copy: Auth hands Verify a string that aliases
//     the request's header buffer, which fasthttp reuses.
//   - Memory is constant: a fixed table of atomic pointers, one immutable
//     entry each, replaced on insert. A flood of distinct valid tokens
//     evicts (random victim in a full set) but never grows the table. No
//     lock: readers load, writers store; two writers racing for a slot lose
//     one entry, which is only a later miss.
//   - Only this verifier's own answers are stored, and its keys, issuer,
//     audience, leeway and claims mapping are fixed when it is built (key
//     bytes are copied), so an entry can never be stale with respect to
//     configuration.

// Defaults of Config's cache.
const (
	// DefaultCacheSize is the number of verified tokens a Verifier
	// remembers when Config.CacheSize is 0.
	DefaultCacheSize = 4096
	// DefaultCacheTTL is the longest a verified token is remembered
	// when Config.CacheTTL is 0 (shorter when it expires sooner).
	DefaultCacheTTL = 5 * time.Minute
)

// maxCachedToken is the longest token the cache stores (Auth's default
// MaxCredentialLength): it bounds the copy each entry keeps. Longer tokens
// (reachable by calling Verify directly) are verified every time.
const maxCachedToken = middleware.DefaultMaxCredentialLength

// cacheWays is the associativity: a token can live in one of cacheWays
// slots of its set, so a lookup reads at most cacheWays pointers.
const cacheWays = 8

// tokenCache is a set-associative table of verified tokens.
type tokenCache struct {
	slots []atomic.Pointer[cacheEntry] // sets × cacheWays
	sets  uint64
	seed  maphash.Seed
	ttl   int64 // ns
	// hashOf is maphash.String; tests replace it to force collisions.
	hashOf func(maphash.Seed, string) uint64
}

// cacheEntry is immutable once stored.
type cacheEntry struct {
	hash  uint64
	token string // a copy, compared in full on every hit
	p     *middleware.Principal
	// The entry answers for notBefore <= now < until (Unix ns).
	notBefore, until int64
}

// newTokenCache returns a cache of size entries (rounded up to a multiple of
// cacheWays) whose entries live at most ttl.
func newTokenCache(size int, ttl time.Duration) *tokenCache {
	sets := (max(size, 1) + cacheWays - 1) / cacheWays
	return &tokenCache{
		slots:  make([]atomic.Pointer[cacheEntry], sets*cacheWays),
		sets:   uint64(sets),
		seed:   maphash.MakeSeed(),
		ttl:    int64(ttl),
		hashOf: maphash.String,
	}
}

// set returns the slots token hash h may live in. The index is the high
// half of h scaled to [0, sets) (a multiply, not a division).
func (tc *tokenCache) set(h uint64) []atomic.Pointer[cacheEntry] {
	i := ((h >> 32) * tc.sets) >> 32
	return tc.slots[i*cacheWays : (i+1)*cacheWays]
}

// get returns the principal stored for token (hash h), if it is valid at
// now (Unix ns).
func (tc *tokenCache) get(h uint64, token string, now int64) *middleware.Principal {
	set := tc.set(h)
	for i := range set {
		e := set[i].Load()
		if e != nil && e.hash == h && e.token == token && e.notBefore <= now && now < e.until {
			return e.p
		}
	}
	return nil
}

// put stores p for token (hash h), valid for notBefore <= now < until.
// The victim is, in order: a slot holding the same token, an empty slot,
// a slot whose entry is not valid now, a random slot.
func (tc *tokenCache) put(h uint64, token string, p *middleware.Principal, notBefore, until, now int64) {
	if len(token) > maxCachedToken || until <= now {
		return
	}
	set := tc.set(h)
	victim := -1
	for i := range set {
		old := set[i].Load()
		if old == nil || old.hash == h && old.token == token || now < old.notBefore || now >= old.until {
			victim = i
			break
		}
	}
	if victim < 0 {
		victim = int(rand.Uint32N(cacheWays))
	}
	set[victim].Store(&cacheEntry{hash: h, token: strings.Clone(token), p: p, notBefore: notBefore, until: until})
}

// len counts the stored entries (valid or not), for tests.
func (tc *tokenCache) len() int {
	n := 0
	for i := range tc.slots {
		if tc.slots[i].Load() != nil {
			n++
		}
	}
	return n
}

// verifyCached is Verify with the cache: a hit returns the stored
// *middleware.Principal, a miss verifies and stores an accepted token.
func (v *Verifier) verifyCached(token string) (*middleware.Principal, error) {
	tc := v.cache
	now := v.now()
	ns := now.UnixNano()
	h := tc.hashOf(tc.seed, token)
	if p := tc.get(h, token, ns); p != nil {
		return p, nil
	}
	p, err := v.verify(token)
	if err != nil {
		return nil, err
	}
	if nb, until, ok := v.window(gojwt.MapClaims(p.Claims), now); ok {
		tc.put(h, token, p, nb, until, ns)
	}
	return p, nil
}

// window is the interval (Unix ns) in which the verifier accepts a token
// with claims, cut to CacheTTL after verifiedAt. It reads exp, nbf and iat
// with golang-jwt's own getters, so the bounds are the ones its validator
// compared (same parsing, same precision). ok is false when a claim cannot
// be read (the token would not have been accepted).
func (v *Verifier) window(claims gojwt.MapClaims, verifiedAt time.Time) (notBefore, until int64, ok bool) {
	end := verifiedAt.Add(time.Duration(v.cache.ttl))
	exp, err := claims.GetExpirationTime()
	if err != nil {
		return 0, 0, false
	}
	if exp != nil && exp.Add(v.leeway).Before(end) {
		end = exp.Add(v.leeway) // golang-jwt: valid while now < exp + leeway
	}
	start := time.Time{}
	for _, get := range [...]func() (*gojwt.NumericDate, error){claims.GetNotBefore, claims.GetIssuedAt} {
		d, err := get()
		if err != nil {
			return 0, 0, false
		}
		if d != nil && d.Add(-v.leeway).After(start) {
			start = d.Add(-v.leeway) // golang-jwt: valid once now >= nbf - leeway (iat alike)
		}
	}
	return unixNano(start), unixNano(end), true
}

var (
	minUnixNano = time.Unix(0, math.MinInt64)
	maxUnixNano = time.Unix(0, math.MaxInt64)
)

// unixNano is t.UnixNano saturated at the int64 range (a token may carry
// dates before 1678 or after 2262, where UnixNano is undefined).
func unixNano(t time.Time) int64 {
	switch {
	case t.Before(minUnixNano):
		return math.MinInt64
	case t.After(maxUnixNano):
		return math.MaxInt64
	}
	return t.UnixNano()
}
