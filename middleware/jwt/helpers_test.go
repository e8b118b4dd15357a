package jwt_test

import (
	"testing"

	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware/jwt"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
)

// Fixtures of the tests: the tokens are minted by an fxtest Signer with
// this issuer, audience and clock.
var (
	hsSecret   = kittest.JWTSecret
	otherKey   = kittest.OtherKey
	fixedNow   = kittest.FixedNow
	testIssuer = kittest.Issuer
	testAud    = kittest.Audience
)

// signerFor is the Signer of alg with key (hsSecret when a nil []byte)
// and kid (when not ""): every token carries sub "user-1", iss, aud, iat
// and exp unless a claim says otherwise.
func signerFor(alg jwttest.Alg, key any, kid string) *jwttest.Signer {
	return kittest.SignerFor(alg, key, kid)
}

// sign returns an HS256 token over the default claims changed by claims (a
// nil value removes a claim), signed with key (hsSecret when nil).
func sign(t testing.TB, claims jwttest.Claims, key []byte) string {
	t.Helper()
	return signerFor(jwttest.HS256, key, "").Token(claims)
}

// hsVerifier accepts the HS256 tokens sign mints (the Signer's own
// configuration, cache on).
func hsVerifier(t testing.TB) *jwt.Verifier {
	t.Helper()
	return signerFor(jwttest.HS256, hsSecret, "").Verifier()
}
