package jwt_test

import (
	"testing"
	"time"

	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/middleware/jwt"
)

// Fixtures of the tests: the tokens are minted by an fxtest Signer with
// this issuer, audience and clock.
var (
	hsSecret   = []byte("0123456789abcdef0123456789abcdef") // 32 bytes: HS256's minimum
	otherKey   = []byte("fedcba9876543210fedcba9876543210")
	fixedNow   = time.Unix(1_800_000_000, 0)
	testIssuer = "https://issuer.example.com"
	testAud    = "fx-api"
)

// signerFor is the Signer of alg with key (hsSecret when a nil []byte)
// and kid (when not ""): every token carries sub "user-1", iss, aud, iat
// and exp unless a claim says otherwise.
func signerFor(alg fxtest.Alg, key any, kid string) *fxtest.Signer {
	if b, ok := key.([]byte); ok && b == nil {
		key = hsSecret
	}
	return fxtest.NewSigner(alg, fxtest.SignerConfig{
		Key: key, KeyID: kid, Issuer: testIssuer, Audience: testAud,
		Now: func() time.Time { return fixedNow },
	})
}

// sign returns an HS256 token over the default claims changed by claims (a
// nil value removes a claim), signed with key (hsSecret when nil).
func sign(t testing.TB, claims fxtest.Claims, key []byte) string {
	t.Helper()
	return signerFor(fxtest.HS256, key, "").Token(claims)
}

// hsVerifier accepts the HS256 tokens sign mints (the Signer's own
// configuration, cache on).
func hsVerifier(t testing.TB) *jwt.Verifier {
	t.Helper()
	return signerFor(fxtest.HS256, hsSecret, "").Verifier()
}
