package jwttest_test

import (
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest/jwtkit"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/jwt"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
)

// rs256 is an RS256 Signer on the tests' shared key (jwtkit.RSAKey: a
// 2048-bit key takes a while to generate).
func rs256() *jwttest.Signer {
	return jwttest.NewSigner(jwttest.RS256, jwttest.SignerConfig{Key: jwtkit.RSAKey()})
}

// whoami answers the principal the handler sees.
func whoami(c *fx.Ctx) error {
	p, _ := middleware.PrincipalFrom(c)
	return c.JSON(200, map[string]any{"sub": p.Subject, "roles": p.Roles, "permissions": p.Permissions, "tenant": p.Tenant})
}

func authClient(t *testing.T, cfg middleware.AuthConfig) *fxtest.Client {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Use(middleware.Auth(cfg))
	app.Get("/me", whoami)
	return fxtest.New(t, app)
}

// Each algorithm family: a token the Signer mints passes its own verifier
// through Auth, with its claims on the principal.
func TestSignerRoundTrip(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, s := range []*jwttest.Signer{
		jwttest.NewSigner(jwttest.HS256, jwttest.SignerConfig{Issuer: "https://issuer.test", Audience: "api", Now: func() time.Time { return now }}),
		rs256(),
		jwttest.NewSigner(jwttest.ES256),
		jwttest.NewSigner(jwttest.EdDSA, jwttest.SignerConfig{KeyID: "k1"}),
	} {
		t.Run(string(s.Alg()), func(t *testing.T) {
			c := authClient(t, middleware.AuthConfig{Bearer: s.Verifier()})
			tok := s.Token(jwttest.Subject("alice"), jwttest.Roles("admin", "ops"), jwttest.Permissions("reports:read"), jwttest.Tenant("acme"))
			c.Get("/me").Bearer(tok).Do().AssertJSON(200, map[string]any{
				"sub": "alice", "roles": []string{"admin", "ops"}, "permissions": []string{"reports:read"}, "tenant": "acme",
			})
			c.Get("/me").Bearer(s.Token()).Do().AssertJSON(200, map[string]any{
				"sub": jwttest.DefaultSubject, "roles": nil, "permissions": nil, "tenant": "",
			})
		})
	}
}

// The forgeries the helpers build are refused, each for its own reason.
func TestSignerForgeries(t *testing.T) {
	s := jwttest.NewSigner(jwttest.HS256)
	c := authClient(t, middleware.AuthConfig{Bearer: s.Verifier()})
	reason := func(tok string) string {
		r := c.Get("/me").Bearer(tok).Do().AssertError(401, fx.ErrorCodes.Unauthenticated)
		var det struct{ Reason string }
		if err := json.Unmarshal(r.Envelope().Details, &det); err != nil {
			t.Fatal(err)
		}
		return det.Reason
	}
	other := jwttest.NewSigner(jwttest.HS256)
	for name, c := range map[string]struct{ tok, reason string }{
		"another key":  {other.Token(), "invalid_credentials"},
		"unsigned":     {s.Unsigned(jwttest.Roles("admin")), "invalid_credentials"},
		"tampered":     {jwttest.Tamper(s.Token(), jwttest.Claims{"roles": []string{"admin"}}), "invalid_credentials"},
		"expired":      {s.Token(jwttest.ExpiresIn(-time.Hour)), "expired"},
		"no exp":       {s.Token(jwttest.Claims{"exp": nil}), "invalid_claims"},
		"another algo": {rs256().Token(), "invalid_credentials"},
	} {
		if got := reason(c.tok); got != c.reason {
			t.Errorf("%s: reason %q, want %q", name, got, c.reason)
		}
	}
	// Tamper keeps header and signature, and changes only the claims.
	tok := s.Token(jwttest.Subject("bob"))
	if tampered := jwttest.Tamper(tok, jwttest.Claims{"sub": "root"}); tampered == tok || tampered[:20] != tok[:20] {
		t.Errorf("Tamper: %s from %s", tampered, tok)
	}
}

func TestSignerConfigAndHeaders(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	s := jwttest.NewSigner(jwttest.HS256, jwttest.SignerConfig{Key: secret, KeyID: "2026", TTL: time.Minute})
	if string(s.Key().([]byte)) != string(secret) || string(s.PublicKey().([]byte)) != string(secret) {
		t.Fatal("Key and PublicKey of an HS256 signer are its secret")
	}
	// Keys map by kid: the KeyID header selects the key.
	cfg := s.JWTConfig()
	cfg.Key, cfg.Keys = nil, map[string]any{"2026": secret}
	v, err := jwt.NewVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(nil, s.Token()); err != nil {
		t.Fatalf("kid from SignerConfig: %v", err)
	}
	if _, err := v.Verify(nil, s.Token(jwttest.KeyID("2025"))); !errors.Is(err, middleware.ErrUnknownKey) {
		t.Fatalf("kid option: %v", err)
	}
	if _, err := v.Verify(nil, s.Token(jwttest.Header("crit", []string{"x"}))); !errors.Is(err, middleware.ErrInvalidClaims) {
		t.Fatalf("crit header: %v", err)
	}
	p, err := v.Verify(nil, s.Token(jwttest.Claims{"scope": "a b"}))
	if err != nil || p.Claims["scope"] != "a b" {
		t.Fatalf("Claims option: %v %v", p, err)
	}
	// A key that does not fit the algorithm is the test's bug: panic.
	defer func() {
		if recover() == nil {
			t.Fatal("NewSigner(RS256, secret) did not panic")
		}
	}()
	jwttest.NewSigner(jwttest.RS256, jwttest.SignerConfig{Key: secret}).Token()
}
