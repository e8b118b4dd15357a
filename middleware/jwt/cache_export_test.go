package middleware

import "hash/maphash"

// Test access to the JWT cache's internals (this file is compiled only
// into the tests).

// JWTCacheLen reports how many entries v's cache holds and how many it can
// hold (0, 0 when the cache is disabled).
func JWTCacheLen(v *JWTVerifier) (n, capacity int) {
	if v.cache == nil {
		return 0, 0
	}
	return v.cache.len(), len(v.cache.slots)
}

// JWTCacheCollide makes every token hash to the same value, so that all
// tokens compete for the same slots and share one hash. Call it before v
// is used.
func JWTCacheCollide(v *JWTVerifier) {
	v.cache.hashOf = func(maphash.Seed, string) uint64 { return 0x5eed_5eed_5eed_5eed }
}

// JWTVerifyBytes is the path Auth takes: the token aliases a buffer the
// caller reuses.
func JWTVerifyBytes(v *JWTVerifier, token []byte) (*Principal, error) {
	return v.verifyBytes(nil, token)
}
