package jwt

import (
	"hash/maphash"

	"github.com/fxhq/fx/middleware"
)

// Test access to the JWT cache's internals (this file is compiled only
// into the tests).

// CacheLen reports how many entries v's cache holds and how many it can
// hold (0, 0 when the cache is disabled).
func CacheLen(v *Verifier) (n, capacity int) {
	if v.cache == nil {
		return 0, 0
	}
	return v.cache.len(), len(v.cache.slots)
}

// CacheCollide makes every token hash to the same value, so that all
// tokens compete for the same slots and share one hash. Call it before v
// is used.
func CacheCollide(v *Verifier) {
	v.cache.hashOf = func(maphash.Seed, string) uint64 { return 0x5eed_5eed_5eed_5eed }
}

// VerifyBytesOf is the path Auth takes: the token aliases a buffer the
// caller reuses.
func VerifyBytesOf(v *Verifier, token []byte) (*middleware.Principal, error) {
	return v.VerifyBytes(nil, token)
}
