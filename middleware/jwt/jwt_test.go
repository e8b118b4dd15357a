package jwt_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest/jwtkit"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/jwt"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
)

// testRSAKey is the tests' shared RSA key (jwtkit.RSAKey).
func testRSAKey(*testing.T) *rsa.PrivateKey { return jwtkit.RSAKey() }

// signWith returns a token signed with alg and key, with kid (when not
// ""), over the default claims changed by claims.
func signWith(t *testing.T, alg jwttest.Alg, key any, kid string, claims jwttest.Claims) string {
	t.Helper()
	return jwtkit.SignerFor(alg, key, kid).Token(claims)
}

func verifyErr(t *testing.T, v *jwt.Verifier, tok string) error {
	t.Helper()
	p, err := v.Verify(nil, tok)
	if err == nil && p == nil {
		t.Fatal("nil principal without error")
	}
	if err != nil && strings.Contains(err.Error(), tok) {
		t.Fatalf("error echoes the token: %v", err)
	}
	return err
}

// TestJWTAlgorithmConfusion: an RS256 verifier must refuse an HS256 token
// whose HMAC secret is the (public) RSA key, in either encoding.
func TestJWTAlgorithmConfusion(t *testing.T) {
	priv := testRSAKey(t)
	v, err := jwt.NewVerifier(jwt.Config{
		Algorithms: []string{"RS256"}, Key: &priv.PublicKey, Now: func() time.Time { return jwtkit.FixedNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyErr(t, v, signWith(t, jwttest.RS256, priv, "", nil)); err != nil {
		t.Fatalf("valid RS256 token refused: %v", err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	for name, secret := range map[string][]byte{"PEM": pemKey, "DER": der} {
		forged := signWith(t, jwttest.HS256, secret, "", jwttest.Claims{"roles": []string{"admin"}})
		if err := verifyErr(t, v, forged); !errors.Is(err, middleware.ErrAlgorithmNotAllowed) {
			t.Errorf("%s-keyed HS256 forgery: err %v, want ErrAlgorithmNotAllowed", name, err)
		}
	}
	// RS256 and ES256 both allowed, RSA key only: an ES256 token cannot
	// be checked against it, whatever it claims.
	ec := jwttest.NewSigner(jwttest.ES256)
	v2, err := jwt.NewVerifier(jwt.Config{
		Algorithms: []string{"RS256", "ES256"}, Key: &priv.PublicKey, Now: func() time.Time { return jwtkit.FixedNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyErr(t, v2, ec.Token()); !errors.Is(err, middleware.ErrUnknownKey) {
		t.Errorf("ES256 token against an RSA key: err %v, want ErrUnknownKey", err)
	}
	// A PS256 token (same key family) is refused when only RS256 is allowed.
	if err := verifyErr(t, v, signWith(t, jwttest.PS256, priv, "", nil)); !errors.Is(err, middleware.ErrAlgorithmNotAllowed) {
		t.Errorf("PS256 token, RS256 allowed: err %v", err)
	}
}

func TestJWTKeyRotation(t *testing.T) {
	k1 := jwtkit.JWTSecret
	k2 := jwtkit.OtherKey
	v, err := jwt.NewVerifier(jwt.Config{
		Algorithms: []string{"HS256"},
		Keys:       map[string]any{"2025": k1, "2026": k2},
		Now:        func() time.Time { return jwtkit.FixedNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kid  string
		key  []byte
		want error
	}{
		{"2025", k1, nil},
		{"2026", k2, nil},
		{"2026", k1, middleware.ErrInvalidSignature}, // the wrong key for its kid
		{"2024", k1, middleware.ErrUnknownKey},       // retired
		{"", k1, middleware.ErrUnknownKey},           // no kid, no default Key
	} {
		err := verifyErr(t, v, signWith(t, jwttest.HS256, c.key, c.kid, nil))
		if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("kid %q: err %v, want %v", c.kid, err, c.want)
		}
	}
}

func TestJWTAsymmetricFamilies(t *testing.T) {
	for _, s := range []*jwttest.Signer{jwttest.NewSigner(jwttest.ES256), jwttest.NewSigner(jwttest.EdDSA)} {
		v, err := jwt.NewVerifier(jwt.Config{Algorithms: []string{string(s.Alg())}, Key: s.PublicKey(), Now: func() time.Time { return jwtkit.FixedNow }})
		if err != nil {
			t.Fatal(err)
		}
		if err := verifyErr(t, v, signWith(t, s.Alg(), s.Key(), "", nil)); err != nil {
			t.Errorf("%s: %v", s.Alg(), err)
		}
	}
}

func TestNewJWTVerifierRefuses(t *testing.T) {
	priv := testRSAKey(t)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	der, _ := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	for name, cfg := range map[string]jwt.Config{
		"no algorithms":        {Key: jwtkit.JWTSecret},
		"none":                 {Algorithms: []string{"none"}, Key: jwtkit.JWTSecret},
		"none among others":    {Algorithms: []string{"HS256", "none"}, Key: jwtkit.JWTSecret},
		"unknown algorithm":    {Algorithms: []string{"HS1024"}, Key: jwtkit.JWTSecret},
		"HS and RS together":   {Algorithms: []string{"HS256", "RS256"}, Key: jwtkit.JWTSecret},
		"no key":               {Algorithms: []string{"HS256"}},
		"RS256 with a secret":  {Algorithms: []string{"RS256"}, Key: jwtkit.JWTSecret},
		"HS256 with RSA key":   {Algorithms: []string{"HS256"}, Key: &priv.PublicKey},
		"RSA private key":      {Algorithms: []string{"RS256"}, Key: priv},
		"short HMAC secret":    {Algorithms: []string{"HS256"}, Key: []byte("secret")},
		"HS512 with 32 bytes":  {Algorithms: []string{"HS256", "HS512"}, Key: jwtkit.JWTSecret},
		"PEM as HMAC secret":   {Algorithms: []string{"HS256"}, Key: pemKey},
		"RSA under 2048 bits":  {Algorithms: []string{"RS256"}, Key: &small.PublicKey},
		"bad key among Keys":   {Algorithms: []string{"HS256"}, Keys: map[string]any{"a": jwtkit.JWTSecret, "b": "string"}},
		"string instead of []": {Algorithms: []string{"HS256"}, Key: string(jwtkit.JWTSecret)},
	} {
		if _, err := jwt.NewVerifier(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestJWTNoExpiryAllowedAndLeeway(t *testing.T) {
	v, err := jwt.NewVerifier(jwt.Config{
		Algorithms: []string{"HS256"}, Key: jwtkit.JWTSecret, AllowNoExpiry: true, Leeway: -1,
		Now: func() time.Time { return jwtkit.FixedNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyErr(t, v, jwtkit.Sign(jwttest.Claims{"exp": nil}, nil)); err != nil {
		t.Fatalf("AllowNoExpiry: %v", err)
	}
	// No leeway: one second past exp is expired.
	if err := verifyErr(t, v, jwtkit.Sign(jwttest.Claims{"exp": jwtkit.FixedNow.Add(-time.Second).Unix()}, nil)); !errors.Is(err, middleware.ErrExpired) {
		t.Fatalf("Leeway<0: err %v", err)
	}
}

// TestJWTThroughAuthRS256 checks the asymmetric path end to end.
func TestJWTThroughAuthRS256(t *testing.T) {
	priv := testRSAKey(t)
	v, err := jwt.NewVerifier(jwt.Config{
		Algorithms: []string{"RS256"}, Key: &priv.PublicKey, Issuer: jwtkit.Issuer, Audience: []string{jwtkit.Audience},
		Now: func() time.Time { return jwtkit.FixedNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	app := fx.New()
	app.Use(middleware.Auth(middleware.AuthConfig{Bearer: v}))
	app.Get("/me", func(c *fx.Ctx) error {
		p, _ := middleware.PrincipalFrom(c)
		return c.String(200, p.Subject)
	})
	c := fxtest.New(t, app)
	if r := c.Get("/me").Bearer(signWith(t, jwttest.RS256, priv, "", nil)).Do().AssertStatus(200); string(r.Body) != "user-1" {
		t.Fatalf("principal %q, want user-1", r.Body)
	}
	der, _ := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	forged := signWith(t, jwttest.HS256, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), "", nil)
	env := c.Get("/me").Bearer(forged).Do().AssertError(401, fx.ErrorCodes.Unauthenticated).Envelope()
	if !strings.Contains(env.Message, "algorithm is not allowed") || !strings.Contains(string(env.Details), `"invalid_credentials"`) {
		t.Fatalf("envelope %+v %s", env, env.Details)
	}
}
