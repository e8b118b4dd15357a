package jwttest

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	fxjwt "github.com/fxhq/fx/middleware/jwt"
	"github.com/golang-jwt/jwt/v5"
)

// Alg is a JWS signing algorithm a Signer signs with.
type Alg string

// The algorithms of jwt.Config.Algorithms (package middleware/jwt).
const (
	HS256 Alg = "HS256"
	HS384 Alg = "HS384"
	HS512 Alg = "HS512"
	RS256 Alg = "RS256"
	RS384 Alg = "RS384"
	RS512 Alg = "RS512"
	PS256 Alg = "PS256"
	PS384 Alg = "PS384"
	PS512 Alg = "PS512"
	ES256 Alg = "ES256"
	ES384 Alg = "ES384"
	ES512 Alg = "ES512"
	EdDSA Alg = "EdDSA"
)

// DefaultSubject is the "sub" of a Signer's tokens unless
// SignerConfig.Subject or the Subject option says otherwise.
const DefaultSubject = "user-1"

// SignerConfig configures NewSigner. The zero value is ready.
type SignerConfig struct {
	// Key is the signing key: []byte for HS*, *rsa.PrivateKey for RS*/PS*,
	// *ecdsa.PrivateKey for ES*, ed25519.PrivateKey for EdDSA. Nil: a new
	// key (a random secret as long as the hash for HS*, a 2048-bit RSA key
	// for RS*/PS* — about 0.1 s to generate, so share such a Signer across
	// tests — or a key on the algorithm's curve).
	Key any

	// KeyID, when set, is the "kid" header of every token.
	KeyID string

	// Issuer and Audience, when set, are the "iss" and "aud" claims of
	// every token, and the verifier requires them.
	Issuer, Audience string

	// Subject is the default "sub" claim. Default DefaultSubject.
	Subject string

	// Now is the clock of "iat" and "exp", and the verifier's clock.
	// Default time.Now.
	Now func() time.Time

	// TTL is how long tokens are valid: "exp" is Now()+TTL. Default 1 hour.
	TTL time.Duration
}

// Signer mints JWTs for tests and builds the verifier that accepts them,
// so a test needs neither key material nor golang-jwt code:
//
//	s := jwttest.NewSigner(jwttest.HS256)
//	app.Use(middleware.Auth(middleware.AuthConfig{Bearer: s.Verifier()}))
//	c.Get("/admin").Bearer(s.Token(jwttest.Roles("admin"), jwttest.Tenant("acme"))).Do()
//
// Every token carries "sub", "iat" (one minute before Now: a token from a
// clock slightly ahead) and "exp", plus "iss" and "aud" when configured;
// options add or replace claims (a nil value in Claims removes one). A
// Signer is safe for concurrent use. Signing an HS256 token costs a few
// microseconds; RS256 about a millisecond.
//
// NewSigner, Token and Verifier panic on a misuse (a key that does not fit
// the algorithm), like net/http/httptest.NewRequest: the test is wrong, not
// the code under test.
type Signer struct {
	alg    Alg
	method jwt.SigningMethod
	key    any // signing key
	pub    any // verification key
	cfg    SignerConfig
}

// NewSigner returns a Signer for alg, configured by cfg (at most one).
func NewSigner(alg Alg, cfg ...SignerConfig) *Signer {
	var c SignerConfig
	if len(cfg) > 0 {
		c = cfg[0]
	}
	if c.Subject == "" {
		c.Subject = DefaultSubject
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.TTL == 0 {
		c.TTL = time.Hour
	}
	method := jwt.GetSigningMethod(string(alg))
	if method == nil || alg == "none" {
		panic(fmt.Sprintf("jwttest.NewSigner: unknown algorithm %q", alg))
	}
	s := &Signer{alg: alg, method: method, key: c.Key, cfg: c}
	if s.key == nil {
		s.key = newKey(alg)
	}
	switch k := s.key.(type) {
	case []byte:
		s.pub = k
	case *rsa.PrivateKey:
		s.pub = &k.PublicKey
	case *ecdsa.PrivateKey:
		s.pub = &k.PublicKey
	case ed25519.PrivateKey:
		s.pub = k.Public()
	default:
		panic(fmt.Sprintf("jwttest.NewSigner: a key of type %T cannot sign", s.key))
	}
	return s
}

// newKey generates a signing key for alg.
func newKey(alg Alg) any {
	must := func(k any, err error) any {
		if err != nil {
			panic("jwttest.NewSigner: generating a key: " + err.Error())
		}
		return k
	}
	switch alg[:2] {
	case "HS":
		size := map[Alg]int{HS256: 32, HS384: 48, HS512: 64}[alg]
		b := make([]byte, size)
		rand.Read(b)
		return b
	case "RS", "PS":
		return must(rsa.GenerateKey(rand.Reader, 2048))
	case "ES":
		curve := map[Alg]elliptic.Curve{ES256: elliptic.P256(), ES384: elliptic.P384(), ES512: elliptic.P521()}[alg]
		return must(ecdsa.GenerateKey(curve, rand.Reader))
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	return must(priv, err)
}

// Alg is the algorithm the Signer signs with.
func (s *Signer) Alg() Alg { return s.alg }

// Key is the signing key (the secret for HS*, a private key otherwise).
func (s *Signer) Key() any { return s.key }

// PublicKey is the key that verifies the Signer's tokens: the secret for
// HS*, the public key otherwise (*rsa.PublicKey, *ecdsa.PublicKey,
// ed25519.PublicKey).
func (s *Signer) PublicKey() any { return s.pub }

// JWTConfig is the verifier configuration that accepts the Signer's
// tokens: its algorithm only, its verification key, its issuer, audience
// and clock. Adjust it (claim names, leeway) before jwt.NewVerifier.
func (s *Signer) JWTConfig() fxjwt.Config {
	cfg := fxjwt.Config{
		Algorithms: []string{string(s.alg)},
		Key:        s.pub,
		Issuer:     s.cfg.Issuer,
		Now:        s.cfg.Now,
	}
	if s.cfg.Audience != "" {
		cfg.Audience = []string{s.cfg.Audience}
	}
	return cfg
}

// Verifier is jwt.NewVerifier(s.JWTConfig()) of package middleware/jwt, for
// middleware.AuthConfig.Bearer. It panics when the configuration is
// refused (an HS256 secret under 32 bytes, an RSA key under 2048 bits).
func (s *Signer) Verifier() *fxjwt.Verifier {
	v, err := fxjwt.NewVerifier(s.JWTConfig())
	if err != nil {
		panic("jwttest: Signer.Verifier: " + err.Error())
	}
	return v
}

// TokenOption sets claims or header fields of one token: Claims, Subject,
// Roles, Permissions, Tenant, ExpiresIn, KeyID, Header.
type TokenOption interface {
	apply(*tokenSpec)
}

type tokenSpec struct {
	claims map[string]any
	header map[string]any
	now    time.Time
}

// Claims sets claims (a nil value removes the claim, defaults included).
type Claims map[string]any

func (c Claims) apply(t *tokenSpec) {
	for k, v := range c {
		if v == nil {
			delete(t.claims, k)
		} else {
			t.claims[k] = v
		}
	}
}

type optionFunc func(*tokenSpec)

func (f optionFunc) apply(t *tokenSpec) { f(t) }

// Subject sets the "sub" claim.
func Subject(sub string) TokenOption { return Claims{"sub": sub} }

// Roles sets the roles claim (jwt.DefaultRolesClaim of package middleware/jwt).
func Roles(roles ...string) TokenOption { return Claims{fxjwt.DefaultRolesClaim: roles} }

// Permissions sets the permissions claim
// (jwt.DefaultPermissionsClaim of package middleware/jwt).
func Permissions(perms ...string) TokenOption {
	return Claims{fxjwt.DefaultPermissionsClaim: perms}
}

// Tenant sets the tenant claim (jwt.DefaultTenantClaim of package middleware/jwt).
func Tenant(id string) TokenOption { return Claims{fxjwt.DefaultTenantClaim: id} }

// ExpiresIn sets "exp" to the Signer's Now plus d; a negative d mints an
// expired token.
func ExpiresIn(d time.Duration) TokenOption {
	return optionFunc(func(t *tokenSpec) { t.claims["exp"] = t.now.Add(d).Unix() })
}

// KeyID sets the "kid" header of the token.
func KeyID(kid string) TokenOption { return Header("kid", kid) }

// Header sets a JOSE header field of the token ("kid", "crit"...); a nil
// value removes it. "alg" is the Signer's.
func Header(name string, value any) TokenOption {
	return optionFunc(func(t *tokenSpec) {
		if value == nil {
			delete(t.header, name)
		} else {
			t.header[name] = value
		}
	})
}

// spec is the claims and header of a token with opts.
func (s *Signer) spec(opts []TokenOption) *tokenSpec {
	now := s.cfg.Now()
	t := &tokenSpec{
		now: now,
		claims: map[string]any{
			"sub": s.cfg.Subject,
			"iat": now.Add(-time.Minute).Unix(),
			"exp": now.Add(s.cfg.TTL).Unix(),
		},
		header: map[string]any{},
	}
	if s.cfg.Issuer != "" {
		t.claims["iss"] = s.cfg.Issuer
	}
	if s.cfg.Audience != "" {
		t.claims["aud"] = s.cfg.Audience
	}
	if s.cfg.KeyID != "" {
		t.header["kid"] = s.cfg.KeyID
	}
	for _, o := range opts {
		o.apply(t)
	}
	return t
}

// Token returns a signed token with the default claims changed by opts.
func (s *Signer) Token(opts ...TokenOption) string {
	return sign(s.method, s.key, s.spec(opts))
}

// Unsigned returns the token Token would return with opts, but with
// algorithm "none" and no signature: what an attacker sends to a verifier
// that trusts the token's own "alg". Every verifier must refuse it.
func (s *Signer) Unsigned(opts ...TokenOption) string {
	return sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, s.spec(opts))
}

func sign(m jwt.SigningMethod, key any, t *tokenSpec) string {
	tk := jwt.NewWithClaims(m, jwt.MapClaims(t.claims))
	maps.Copy(tk.Header, t.header)
	out, err := tk.SignedString(key)
	if err != nil {
		panic("jwttest: signing a token: " + err.Error())
	}
	return out
}

// Tamper returns token with its claims changed by claims (a nil value
// removes a claim) and its header and signature kept: a forgery every
// verifier must refuse (invalid signature).
func Tamper(token string, claims Claims) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		panic("jwttest.Tamper: not a JWS compact token")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		panic("jwttest.Tamper: payload: " + err.Error())
	}
	m := map[string]any{}
	if err := json.Unmarshal(payload, &m); err != nil {
		panic("jwttest.Tamper: payload: " + err.Error())
	}
	t := &tokenSpec{claims: m}
	claims.apply(t)
	b, err := json.Marshal(t.claims)
	if err != nil {
		panic("jwttest.Tamper: " + err.Error())
	}
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(b) + "." + parts[2]
}
