// Package jwtkit holds the JWT fixtures shared by the tests of
// middleware, middleware/jwt and middleware/idempotency: one secret, one
// RSA key per test binary, one issuer, audience and clock, and the
// Signer that mints tokens with them. It lives apart from kittest so that
// kittest's users outside those packages (nested modules among them) do
// not link golang-jwt. Only tests import it.
package jwtkit

import (
	"crypto/rsa"
	"sync"
	"time"

	"github.com/fxhq/fx/middleware/jwt"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
)

// The JWT fixtures shared by the tests of middleware and middleware/jwt:
// tokens are minted by an fxtest Signer with this issuer, audience and
// clock.
var (
	JWTSecret = []byte("0123456789abcdef0123456789abcdef") // 32 bytes: HS256's minimum
	OtherKey  = []byte("fedcba9876543210fedcba9876543210")
	FixedNow  = time.Unix(1_800_000_000, 0)
)

// Issuer and Audience are the iss and aud of the fixtures' tokens.
const (
	Issuer   = "https://issuer.example.com"
	Audience = "fx-api"
)

// SignerFor is the Signer of alg with key (JWTSecret when a nil []byte)
// and kid (when not ""): every token carries sub "user-1", iss, aud, iat
// and exp unless a claim says otherwise.
func SignerFor(alg jwttest.Alg, key any, kid string) *jwttest.Signer {
	if b, ok := key.([]byte); ok && b == nil {
		key = JWTSecret
	}
	return jwttest.NewSigner(alg, jwttest.SignerConfig{
		Key: key, KeyID: kid, Issuer: Issuer, Audience: Audience,
		Now: func() time.Time { return FixedNow },
	})
}

// RSAKey is one 2048-bit RSA key per test binary, from a jwttest Signer:
// generating one takes a while, so the tests that need an RSA key share
// it.
var RSAKey = sync.OnceValue(func() *rsa.PrivateKey {
	return jwttest.NewSigner(jwttest.RS256).Key().(*rsa.PrivateKey)
})

// Sign returns an HS256 token over the default claims changed by claims
// (a nil value removes a claim), signed with key (JWTSecret when nil).
func Sign(claims jwttest.Claims, key []byte) string {
	return SignerFor(jwttest.HS256, key, "").Token(claims)
}

// HSVerifier accepts the tokens Sign mints with JWTSecret (the Signer's
// configuration: issuer, audience and clock checked, cache on).
func HSVerifier() *jwt.Verifier { return SignerFor(jwttest.HS256, JWTSecret, "").Verifier() }
