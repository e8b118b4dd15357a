package kittest

import (
	"time"

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
