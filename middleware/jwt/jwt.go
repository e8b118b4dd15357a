// Package jwt is a middleware.Verifier for JSON Web Tokens (RFC 7519,
// JWS-signed) on github.com/golang-jwt/jwt/v5: pass NewVerifier's result
// as middleware.AuthConfig.Bearer.
//
//	v, err := jwt.NewVerifier(jwt.Config{Algorithms: []string{"RS256"}, Key: pub})
//	...
//	app.Use(middleware.Auth(middleware.AuthConfig{Bearer: v}))
//
// It lives apart from package middleware so that a program importing
// middleware for CORS or rate limiting does not link a JWT library. Its
// refusals wrap middleware's Err* sentinels, which Auth turns into its 401
// answers; its principals are middleware.Principal.
package jwt

import (
	"bytes"
	"cmp"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	gojwt "github.com/golang-jwt/jwt/v5"
)

// DefaultLeeway is the clock skew Config allows by default when checking
// exp, nbf and iat.
const DefaultLeeway = 30 * time.Second

// Defaults of the claims NewVerifier reads into a middleware.Principal.
const (
	DefaultRolesClaim       = "roles"
	DefaultPermissionsClaim = "permissions"
	DefaultTenantClaim      = "tenant_id"
)

// Config configures NewVerifier.
type Config struct {
	// Algorithms is the allow-list of signing algorithms ("alg"), for
	// example {"HS256"} or {"RS256", "ES256"}. Required. "none" is refused,
	// and so is mixing HMAC (HS*) with public-key algorithms: a verifier
	// that accepts both is the algorithm-confusion hole (an HS256 token
	// "signed" with the public key). Known: HS256/384/512, RS256/384/512,
	// PS256/384/512, ES256/384/512, EdDSA.
	Algorithms []string

	// Key verifies tokens without a "kid" header (or every token, when
	// Keys is empty). Its Go type must fit the algorithm: []byte for HS*
	// (at least as long as the hash: 32, 48 or 64 bytes), *rsa.PublicKey
	// (2048 bits or more) for RS*/PS*, *ecdsa.PublicKey for ES*,
	// ed25519.PublicKey for EdDSA. A token whose algorithm does not fit the
	// key's type is refused, whatever the allow-list says.
	Key any

	// Keys maps key IDs ("kid" header) to keys, for rotation. A token with
	// a kid not in Keys is refused (middleware.ErrUnknownKey). Types as for Key.
	Keys map[string]any

	// Issuer, when set, must equal the "iss" claim (which is then
	// required).
	Issuer string

	// Audience, when set, must contain a value of the "aud" claim (which is
	// then required).
	Audience []string

	// Leeway is the clock skew allowed on exp, nbf and iat. 0 means
	// DefaultLeeway (30s); negative means none.
	Leeway time.Duration

	// AllowNoExpiry accepts tokens without "exp". Default false: a token
	// that never expires is refused (middleware.ErrInvalidClaims).
	AllowNoExpiry bool

	// RolesClaim, PermissionsClaim and TenantClaim name the claims read
	// into middleware.Principal.Roles, .Permissions and .Tenant. A name with dots is a
	// path into nested objects ("realm_access.roles"). Roles and permissions
	// may be an array of strings or one space-separated string (the OAuth
	// "scope" form). Defaults "roles", "permissions", "tenant_id".
	RolesClaim, PermissionsClaim, TenantClaim string

	// Now is the clock, for tests. Default time.Now.
	Now func() time.Time

	// CacheSize is how many verified tokens Verify remembers, so that a
	// token seen again costs a lookup (~100 ns, no allocation) instead of
	// a verification (~6 µs, 70 allocations for a small HS256 token). 0
	// means DefaultCacheSize (4096); negative disables the cache. It is
	// rounded up to a multiple of 8. Storing a newly verified token adds 4
	// small allocations to its verification.
	//
	// Memory bound: the table never grows (8 bytes a slot), and each entry
	// holds a copy of its token (tokens over 4 KiB are not cached) and the
	// middleware.Principal decoded from it. Measured: about 4.5 times the token's
	// length an entry (1.6 KiB for a 350-byte token, 9.5 KiB for a 2 KiB
	// one), so a full default cache of 1 KiB tokens holds about 18 MiB,
	// and 4096 × 4 KiB tokens about 75 MiB. A flood of forged tokens
	// stores nothing; a flood of valid ones evicts but does not grow it.
	//
	// Only accepted tokens are stored (a refusal is decided afresh every
	// time), and a stored token is accepted only while the verifier itself
	// would accept it: from nbf/iat minus Leeway until exp plus Leeway, and
	// never longer than CacheTTL after it was verified. Every request with
	// the same token then gets the same *middleware.Principal: treat it as read-only
	// (see middleware.Principal).
	CacheSize int

	// CacheTTL caps how long a verified token is remembered, whatever its
	// exp (it matters for tokens without exp, see AllowNoExpiry). 0 means
	// DefaultCacheTTL (5 minutes); negative is refused.
	CacheTTL time.Duration
}

// Verifier verifies JWS-signed JWTs (RFC 7519) with
// github.com/golang-jwt/jwt/v5. Use it as middleware.AuthConfig.Bearer. It is safe for
// concurrent use.
type Verifier struct {
	parser  *gojwt.Parser
	allowed map[string]family
	key     any
	keys    map[string]any
	keyFunc gojwt.Keyfunc

	rolesClaim, permsClaim, tenantClaim string
	// needIss and needAud: iss and aud are required (Issuer, Audience set).
	needIss, needAud bool

	// cache remembers accepted tokens (nil: disabled, CacheSize < 0); now
	// and leeway are the clock and leeway golang-jwt is given, which the
	// cache needs to expire entries where the parser would refuse.
	cache  *tokenCache
	now    func() time.Time
	leeway time.Duration
}

// family is a group of algorithms that share a key type.
type family uint8

const (
	famHMAC family = iota + 1
	famRSA
	famECDSA
	famEdDSA
)

var algorithms = map[string]struct {
	fam     family
	minHMAC int // HMAC: the smallest key (RFC 7518 §3.2)
}{
	"HS256": {famHMAC, 32}, "HS384": {famHMAC, 48}, "HS512": {famHMAC, 64},
	"RS256": {famRSA, 0}, "RS384": {famRSA, 0}, "RS512": {famRSA, 0},
	"PS256": {famRSA, 0}, "PS384": {famRSA, 0}, "PS512": {famRSA, 0},
	"ES256": {famECDSA, 0}, "ES384": {famECDSA, 0}, "ES512": {famECDSA, 0},
	"EdDSA": {famEdDSA, 0},
}

// keyFamily is the algorithm family a key's Go type serves (0: none).
func keyFamily(k any) family {
	switch k.(type) {
	case []byte:
		return famHMAC
	case *rsa.PublicKey:
		return famRSA
	case *ecdsa.PublicKey:
		return famECDSA
	case ed25519.PublicKey:
		return famEdDSA
	}
	return 0
}

// NewVerifier checks cfg and returns its verifier. Configuration errors
// (no algorithms, "none", HMAC mixed with public-key algorithms, no key, a
// key whose type fits no allowed algorithm, an HMAC key shorter than its
// hash or that looks like a PEM public key, an RSA key under 2048 bits) are
// returned, never deferred to the first request.
//
// Verify checks, in this order: syntax, the algorithm against the
// allow-list and the key's type, the "kid", the signature, then exp (required
// unless AllowNoExpiry), nbf, iat, iss and aud with Leeway. An HS256 token with a
// handful of claims costs a few microseconds and a few dozen small
// allocations (golang-jwt decodes header and claims with encoding/json);
// the same token seen again is answered from the cache (see CacheSize).
//
// The keys are fixed for the verifier's life (Key and Keys are copied,
// []byte secrets included): there is no key-set refresh, so every cached
// answer was given with a key the verifier still holds. To retire a key,
// build a new verifier without it; its cache starts empty, so tokens
// signed with the retired key are refused by it even if the old verifier
// had cached them.
func NewVerifier(cfg Config) (*Verifier, error) {
	if len(cfg.Algorithms) == 0 {
		return nil, errors.New("jwt.NewVerifier: Algorithms is empty")
	}
	v := &Verifier{allowed: make(map[string]family, len(cfg.Algorithms))}
	fams := map[family]bool{}
	minHMAC := 0
	for _, alg := range cfg.Algorithms {
		if strings.EqualFold(alg, "none") {
			return nil, errors.New("jwt.NewVerifier: the none algorithm is never allowed")
		}
		a, ok := algorithms[alg]
		if !ok {
			return nil, fmt.Errorf("jwt.NewVerifier: unknown algorithm %q", alg)
		}
		v.allowed[alg] = a.fam
		fams[a.fam] = true
		minHMAC = max(minHMAC, a.minHMAC)
	}
	if fams[famHMAC] && len(fams) > 1 {
		return nil, errors.New("jwt.NewVerifier: HMAC (HS*) and public-key algorithms must not be allowed together (algorithm confusion)")
	}
	if cfg.Key == nil && len(cfg.Keys) == 0 {
		return nil, errors.New("jwt.NewVerifier: set Key or Keys")
	}
	if cfg.CacheTTL < 0 {
		return nil, errors.New("jwt.NewVerifier: CacheTTL is negative (0 means the default; disable the cache with a negative CacheSize)")
	}
	check := func(name string, k any) error {
		f := keyFamily(k)
		if f == 0 || !fams[f] {
			return fmt.Errorf("jwt.NewVerifier: %s has type %T, which fits none of the allowed algorithms %v", name, k, cfg.Algorithms)
		}
		switch k := k.(type) {
		case []byte:
			if len(k) < minHMAC {
				return fmt.Errorf("jwt.NewVerifier: %s is %d bytes; HMAC keys must be at least %d bytes for %v", name, len(k), minHMAC, cfg.Algorithms)
			}
			if bytes.Contains(k, []byte("-----BEGIN")) {
				return fmt.Errorf("jwt.NewVerifier: %s looks like a PEM key; parse it (golang-jwt's ParseRSAPublicKeyFromPEM) instead of using it as an HMAC secret", name)
			}
		case *rsa.PublicKey:
			if k.N == nil || k.N.BitLen() < 2048 {
				return fmt.Errorf("jwt.NewVerifier: %s is an RSA key under 2048 bits", name)
			}
		}
		return nil
	}
	if cfg.Key != nil {
		if err := check("Key", cfg.Key); err != nil {
			return nil, err
		}
		v.key = ownKey(cfg.Key)
	}
	if len(cfg.Keys) > 0 {
		v.keys = make(map[string]any, len(cfg.Keys))
		for kid, k := range cfg.Keys {
			if err := check(fmt.Sprintf("Keys[%q]", kid), k); err != nil {
				return nil, err
			}
			v.keys[kid] = ownKey(k)
		}
	}

	leeway := cfg.Leeway
	switch {
	case leeway == 0:
		leeway = DefaultLeeway
	case leeway < 0:
		leeway = 0
	}
	// The allow-list is enforced in lookupKey (golang-jwt calls it before
	// checking the signature), where the refusal can be told apart.
	// golang-jwt checks iat only when asked: a token issued in the future
	// (beyond Leeway) is refused like one whose nbf is in the future.
	opts := []gojwt.ParserOption{gojwt.WithLeeway(leeway), gojwt.WithIssuedAt()}
	if !cfg.AllowNoExpiry {
		opts = append(opts, gojwt.WithExpirationRequired())
	}
	if cfg.Issuer != "" {
		opts = append(opts, gojwt.WithIssuer(cfg.Issuer))
	}
	if len(cfg.Audience) > 0 {
		opts = append(opts, gojwt.WithAudience(cfg.Audience...))
	}
	v.now, v.leeway = time.Now, leeway
	if cfg.Now != nil {
		opts = append(opts, gojwt.WithTimeFunc(cfg.Now))
		v.now = cfg.Now
	}
	if cfg.CacheSize >= 0 {
		v.cache = newTokenCache(cmp.Or(cfg.CacheSize, DefaultCacheSize), cmp.Or(cfg.CacheTTL, DefaultCacheTTL))
	}
	v.needIss, v.needAud = cfg.Issuer != "", len(cfg.Audience) > 0
	v.parser = gojwt.NewParser(opts...)
	v.keyFunc = v.lookupKey
	v.rolesClaim = orDefault(cfg.RolesClaim, DefaultRolesClaim)
	v.permsClaim = orDefault(cfg.PermissionsClaim, DefaultPermissionsClaim)
	v.tenantClaim = orDefault(cfg.TenantClaim, DefaultTenantClaim)
	return v, nil
}

// ownKey copies an HMAC secret, so that a caller changing its slice later
// cannot change what the verifier (and its cache) accepts. Public keys are
// kept as given.
func ownKey(k any) any {
	if b, ok := k.([]byte); ok {
		return bytes.Clone(b)
	}
	return k
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// lookupKey is the gojwt.Keyfunc: it runs after the allow-list check and
// before the signature check.
func (v *Verifier) lookupKey(t *gojwt.Token) (any, error) {
	alg := t.Method.Alg()
	fam, ok := v.allowed[alg]
	if !ok { // "none", unknown or simply not allowed
		return nil, middleware.ErrAlgorithmNotAllowed
	}
	if _, crit := t.Header["crit"]; crit {
		// RFC 7515 §4.1.11: extensions we do not understand must be refused.
		return nil, middleware.ErrInvalidClaims
	}
	key := v.key
	if kid, present := t.Header["kid"]; present && v.keys != nil {
		s, _ := kid.(string)
		k, found := v.keys[s]
		if !found {
			return nil, middleware.ErrUnknownKey
		}
		key = k
	}
	if key == nil || keyFamily(key) != fam {
		return nil, middleware.ErrUnknownKey
	}
	return key, nil
}

// Verify verifies token and returns its principal: Subject from "sub",
// Roles, Permissions and Tenant from the configured claims, Claims with
// every claim, Scheme middleware.SchemeBearer. Refusals wrap package middleware's Err*
// sentinels (and the golang-jwt error, for logs); no error text contains
// the token. c is not used and may be nil.
//
// With the cache on (the default, see Config.CacheSize) a token already
// accepted is answered with the same *middleware.Principal as the first time, without
// allocating: the middleware.Principal, its slices and its Claims map are shared by
// every request carrying that token and must not be modified.
func (v *Verifier) Verify(c *fx.Ctx, token string) (*middleware.Principal, error) {
	if v.cache != nil {
		return v.verifyCached(token)
	}
	return v.verify(token)
}

// verify is Verify without the cache: golang-jwt parses and checks token.
func (v *Verifier) verify(token string) (*middleware.Principal, error) {
	claims := gojwt.MapClaims{}
	_, err := v.parser.ParseWithClaims(token, claims, v.keyFunc)
	if err != nil {
		s := jwtSentinel(err)
		if s == middleware.ErrInvalidClaims && errors.Is(err, gojwt.ErrTokenRequiredClaimMissing) {
			// golang-jwt reports an absent iss or aud as a missing claim;
			// the sentinels name them.
			if iss, _ := claims["iss"].(string); v.needIss && iss == "" {
				s = middleware.ErrInvalidIssuer
			} else if aud, _ := claims.GetAudience(); v.needAud && (len(aud) == 0 || len(aud) == 1 && aud[0] == "") {
				s = middleware.ErrInvalidAudience
			}
		}
		return nil, fmt.Errorf("%w: %w", s, err)
	}
	p := &middleware.Principal{Scheme: middleware.SchemeBearer, Claims: claims}
	p.Subject, _ = claims["sub"].(string)
	p.Roles = stringList(lookupClaim(claims, v.rolesClaim))
	p.Permissions = stringList(lookupClaim(claims, v.permsClaim))
	p.Tenant, _ = lookupClaim(claims, v.tenantClaim).(string)
	return p, nil
}

// VerifyBytes is Verify reading token in place, which lets Auth skip
// copying it (middleware.BytesVerifier): golang-jwt keeps the token string
// only in the *jwt.Token, which is dropped here, every claim value is
// decoded into fresh memory, and the cache stores a copy.
func (v *Verifier) VerifyBytes(c *fx.Ctx, token []byte) (*middleware.Principal, error) {
	return v.Verify(c, unsafe.String(unsafe.SliceData(token), len(token)))
}

// Verifier reads tokens in place and states its format to Auth.
var (
	_ middleware.BytesVerifier   = (*Verifier)(nil)
	_ middleware.BearerFormatter = (*Verifier)(nil)
)

// BearerFormat is "JWT": the OpenAPI bearerFormat Auth declares for a
// bearer token this verifier checks (middleware.BearerFormatter).
func (v *Verifier) BearerFormat() string { return "JWT" }

// jwtSentinel maps a golang-jwt error to this package's sentinel.
func jwtSentinel(err error) error {
	for _, s := range [...]error{middleware.ErrAlgorithmNotAllowed, middleware.ErrUnknownKey, middleware.ErrInvalidClaims} {
		if errors.Is(err, s) {
			return s
		}
	}
	switch {
	case errors.Is(err, gojwt.ErrTokenMalformed):
		return middleware.ErrMalformedCredential
	case errors.Is(err, gojwt.ErrTokenSignatureInvalid):
		return middleware.ErrInvalidSignature
	case errors.Is(err, gojwt.ErrTokenUnverifiable):
		return middleware.ErrAlgorithmNotAllowed // alg missing or unknown to golang-jwt
	case errors.Is(err, gojwt.ErrTokenExpired):
		return middleware.ErrExpired
	case errors.Is(err, gojwt.ErrTokenNotValidYet), errors.Is(err, gojwt.ErrTokenUsedBeforeIssued):
		return middleware.ErrNotYetValid
	case errors.Is(err, gojwt.ErrTokenInvalidIssuer):
		return middleware.ErrInvalidIssuer
	case errors.Is(err, gojwt.ErrTokenInvalidAudience):
		return middleware.ErrInvalidAudience
	case errors.Is(err, gojwt.ErrTokenRequiredClaimMissing), errors.Is(err, gojwt.ErrInvalidType),
		errors.Is(err, gojwt.ErrTokenInvalidClaims):
		return middleware.ErrInvalidClaims
	}
	return middleware.ErrInvalidCredential
}

// lookupClaim returns the claim at path, following dots into nested
// objects. It does not allocate.
func lookupClaim(claims map[string]any, path string) any {
	var cur any = claims
	for path != "" {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		var name string
		name, path, _ = strings.Cut(path, ".")
		if cur, ok = m[name]; !ok {
			return nil
		}
		if path == "" {
			return cur
		}
	}
	return nil
}

// stringList reads an array of strings (non-strings skipped) or a
// space-separated string.
func stringList(v any) []string {
	switch v := v.(type) {
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case string:
		return strings.Fields(v)
	}
	return nil
}
