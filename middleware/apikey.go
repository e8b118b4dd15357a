package middleware

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"

	"github.com/fxhq/fx"
)

// MinAPIKeyLength is the shortest key NewAPIKeys accepts, in bytes. Use
// random keys of at least 128 bits (for example 32 hex or 22 base64url
// characters); shorter ones are guessable.
const MinAPIKeyLength = 16

// APIKeys is a Verifier for a fixed set of API keys (AuthConfig.APIKeys).
//
// A presented key is hashed with SHA-256 and its digest compared with the
// digest of every configured key with crypto/subtle, without stopping at a
// match: the time taken does not depend on how much of a key was guessed
// right, nor on which key matched, nor on the configured keys' lengths.
// Cost: one SHA-256 of the presented key and a 32-byte comparison per
// configured key; no allocation. For thousands of keys, or keys that
// change at run time, implement Verifier against your store instead (look
// keys up by a hash of the key, never by the key itself).
type APIKeys struct {
	digests    [][sha256.Size]byte
	principals []*Principal
}

// NewAPIKeys returns the verifier of keys, a map from each key to the
// principal it authenticates. The principals are copied, with Scheme set to
// SchemeAPIKey; every request with a key gets the same *Principal (do not
// modify it). Keys must be at least MinAPIKeyLength bytes of visible ASCII
// (they travel in a header).
func NewAPIKeys(keys map[string]Principal) (*APIKeys, error) {
	if len(keys) == 0 {
		return nil, errors.New("middleware.NewAPIKeys: no keys")
	}
	v := &APIKeys{}
	i := 0
	for k, p := range keys {
		i++
		if len(k) < MinAPIKeyLength {
			return nil, fmt.Errorf("middleware.NewAPIKeys: key %d of subject %q is shorter than %d bytes", i, p.Subject, MinAPIKeyLength)
		}
		if !isVisibleASCII([]byte(k)) {
			return nil, fmt.Errorf("middleware.NewAPIKeys: key %d of subject %q has characters a header cannot carry", i, p.Subject)
		}
		p.Scheme = SchemeAPIKey
		v.digests = append(v.digests, sha256.Sum256([]byte(k)))
		v.principals = append(v.principals, &p)
	}
	return v, nil
}

// Verify returns the principal of key, or an error wrapping
// ErrInvalidCredential. c is not used and may be nil.
func (v *APIKeys) Verify(_ *fx.Ctx, key string) (*Principal, error) {
	return v.VerifyBytes(nil, []byte(key))
}

// VerifyBytes is Verify reading key in place (see BytesVerifier); it does
// not retain key. Cost: one SHA-256 of key and a constant-time comparison
// per configured key; no allocation.
func (v *APIKeys) VerifyBytes(_ *fx.Ctx, key []byte) (*Principal, error) {
	d := sha256.Sum256(key)
	match := -1
	for i := range v.digests {
		eq := subtle.ConstantTimeCompare(d[:], v.digests[i][:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 {
		return nil, ErrInvalidCredential
	}
	return v.principals[match], nil
}
