package middleware

import (
	"errors"
	"strings"
	"unsafe"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// Errors a Verifier returns to say why a credential was refused. Auth maps
// each (found with errors.Is, so wrapping is fine) to a 401
// FX_UNAUTHENTICATED with its own message and reason; any other error is
// treated as ErrInvalidCredential. A Verifier that fails for a reason that
// is not the client's (its key store is down) returns an *fx.Error instead,
// which Auth passes through unchanged (for example 503).
var (
	// ErrMalformedCredential: the credential is not syntactically valid
	// (a JWT that does not parse).
	ErrMalformedCredential = errors.New("middleware: credential is malformed")
	// ErrInvalidCredential: the credential is well-formed but not accepted
	// (an unknown API key, a revoked token).
	ErrInvalidCredential = errors.New("middleware: credential is invalid")
	// ErrInvalidSignature: the signature does not verify with the key.
	ErrInvalidSignature = errors.New("middleware: credential signature is invalid")
	// ErrAlgorithmNotAllowed: the token names an algorithm outside the
	// allow-list ("none" is never allowed).
	ErrAlgorithmNotAllowed = errors.New("middleware: signing algorithm is not allowed")
	// ErrUnknownKey: the token names a key ID ("kid") that is not configured,
	// or its algorithm does not fit the key's type.
	ErrUnknownKey = errors.New("middleware: signing key is unknown")
	// ErrExpired: the credential's expiry ("exp") has passed.
	ErrExpired = errors.New("middleware: credential has expired")
	// ErrNotYetValid: the credential is not valid yet ("nbf" or "iat" in the
	// future).
	ErrNotYetValid = errors.New("middleware: credential is not valid yet")
	// ErrInvalidIssuer: the "iss" claim is absent or not the expected one.
	ErrInvalidIssuer = errors.New("middleware: credential issuer is not accepted")
	// ErrInvalidAudience: the "aud" claim is absent or names none of the
	// expected audiences.
	ErrInvalidAudience = errors.New("middleware: credential audience is not accepted")
	// ErrInvalidClaims: a required claim is missing or a claim has the wrong
	// type.
	ErrInvalidClaims = errors.New("middleware: credential claims are invalid")
)

// Reasons are the stable, machine-readable kinds of failure sent as
// details.reason of every error this package returns (FailureDetails),
// for clients that branch on them (refresh on "expired", re-login on
// "invalid_credentials"). These are Auth's; RequireRoles', Tenant's and
// CORS's are beside them.
const (
	ReasonMissingCredentials   = "missing_credentials"   // 401: nothing sent
	ReasonMalformedCredentials = "malformed_credentials" // 401: bad header syntax or unparsable token
	ReasonUnsupportedScheme    = "unsupported_scheme"    // 401: Authorization scheme other than Bearer
	ReasonMultipleCredentials  = "multiple_credentials"  // 401: both a bearer token and an API key, or a credential header repeated
	ReasonCredentialsTooLong   = "credentials_too_long"  // 401: over AuthConfig.MaxCredentialLength
	ReasonInvalidCredentials   = "invalid_credentials"   // 401: bad signature, unknown key or algorithm, unknown API key
	ReasonExpired              = "expired"               // 401: exp passed
	ReasonNotYetValid          = "not_yet_valid"         // 401: nbf/iat in the future
	ReasonInvalidClaims        = "invalid_claims"        // 401: issuer, audience or required claim
)

// errNilPrincipal answers a Verifier that returned neither a principal
// nor an error (a bug: 500).
var errNilPrincipal = fx.NewCatalogError(fx.ErrorCodes.InternalError,
	"middleware: Verifier returned neither a principal nor an error")

// Verifier checks a credential and returns the principal it identifies.
//
// credential is the bearer token (without "Bearer ") or the API key, already
// checked for syntax and length by Auth. Verify is called concurrently and
// must be safe for that. c is the request (for verifiers that need other
// headers or c.Context()); it may be nil when a verifier is called outside
// a request (NewAPIKeys' verifier and that of package middleware/jwt accept nil).
//
// Refusals are errors wrapping one of ErrMalformedCredential,
// ErrInvalidCredential, ErrInvalidSignature, ErrAlgorithmNotAllowed,
// ErrUnknownKey, ErrExpired, ErrNotYetValid, ErrInvalidIssuer,
// ErrInvalidAudience or ErrInvalidClaims; Auth answers each with 401 and
// its own message. Any other plain error counts as ErrInvalidCredential
// (fail closed). An *fx.Error is passed through as is: use one for
// failures that are not the client's (a key store that is down → 503).
// Returning (nil, nil) is a bug and answers 500.
type Verifier interface {
	Verify(c *fx.Ctx, credential string) (*Principal, error)
}

// VerifierFunc adapts a function to Verifier.
type VerifierFunc func(c *fx.Ctx, credential string) (*Principal, error)

// Verify calls f(c, credential).
func (f VerifierFunc) Verify(c *fx.Ctx, credential string) (*Principal, error) {
	return f(c, credential)
}

// BytesVerifier is a Verifier that can read the credential in place: Auth
// calls VerifyBytes instead of Verify, which saves the copy of the
// credential it makes for other verifiers (one small allocation a
// request). credential aliases the request's header buffer, which fasthttp
// reuses: VerifyBytes must not retain it, nor any string viewing it,
// after it returns (copy what it keeps). It must answer exactly what
// Verify answers for the same credential. NewAPIKeys' verifier and the
// JWT verifier of package middleware/jwt implement it.
type BytesVerifier interface {
	Verifier
	VerifyBytes(c *fx.Ctx, credential []byte) (*Principal, error)
}

// BearerFormatter is a Verifier that says which format of bearer token it
// checks: BearerFormat is the OpenAPI bearerFormat of the bearer security
// scheme Auth declares ("JWT" for the verifier of package
// middleware/jwt). A Verifier without it declares a bearer token of no
// stated format.
type BearerFormatter interface {
	Verifier
	BearerFormat() string
}

// Defaults of AuthConfig.
const (
	DefaultRealm               = "api"
	DefaultAPIKeyHeader        = "X-API-Key"
	DefaultMaxCredentialLength = 4096
)

// AuthConfig configures Auth. At least one of Bearer and APIKeys must be
// set.
type AuthConfig struct {
	// Bearer verifies "Authorization: Bearer <token>" (RFC 6750 §2.1; the
	// scheme name is case-insensitive, the token must be b64token syntax).
	// Nil: the Authorization header is ignored. Tokens in the query string
	// or a form body (RFC 6750 §2.2, §2.3) are not read: they leak into
	// logs.
	Bearer Verifier

	// APIKeys verifies the API key sent in APIKeyHeader (visible ASCII, no
	// spaces). Nil: API keys are not accepted. NewAPIKeys is a fixed set
	// compared in constant time.
	APIKeys Verifier

	// APIKeyHeader is the header carrying the API key. Default "X-API-Key".
	APIKeyHeader string

	// Realm is the realm of the WWW-Authenticate challenges. Default "api".
	// It must not contain '"', '\' or control characters.
	Realm string

	// Optional lets requests that carry no credentials at all through
	// without a principal (RequireRoles and friends then answer 401).
	// Credentials that are present but bad are still refused with 401.
	Optional bool

	// MaxCredentialLength is the longest token or key accepted, in bytes;
	// longer ones are refused (401, credentials_too_long) before any
	// verification work. Default 4096. Headers longer than the App's
	// HeaderLimit never get here: fx answers 431 FX_HEADERS_TOO_LARGE.
	MaxCredentialLength int
}

// authenticator is one configured Auth.
type authenticator struct {
	bearer, apiKeys         Verifier
	bearerFast, apiKeysFast BytesVerifier
	keyHeader               string
	optional                bool
	maxLen                  int

	// challenges[scheme][kind] is the WWW-Authenticate value of a failure;
	// missing lists the challenges of a request without credentials (one
	// per accepted scheme); forbidden is the insufficient_scope challenge.
	challenges [numSchemes][numKinds]string
	missing    []string
	forbidden  string
}

// Auth returns middleware that authenticates every request it runs for.
//
// With credentials it verifies them and stores the Principal (read it with
// PrincipalFrom) before calling next. It refuses with 401
// FX_UNAUTHENTICATED and a WWW-Authenticate challenge (RFC 6750 §3:
// error="invalid_request" for a malformed header, error="invalid_token"
// for a bad token, no error attribute when nothing was sent) when
// credentials are missing (unless Optional), malformed, of another scheme,
// too long, sent both ways at once, sent in a repeated Authorization or
// API key header, or refused by the Verifier. The message
// names the kind of failure; details.reason carries it (Reason constants).
//
// Cost: reading and checking the headers does not allocate; the *fx.Error
// of every refusal is shared. A custom Verifier costs one copy of the
// credential plus what it does itself; NewAPIKeys adds none (one SHA-256 and
// a constant-time comparison per configured key), middleware/jwt's verifier what
// golang-jwt costs to decode and check a token.
//
// Auth panics when neither Bearer nor APIKeys is set, or when
// APIKeyHeader or Realm is not a valid header token/quoted-string: these are
// programming errors found at start-up.
func Auth(cfg AuthConfig) fx.Middleware {
	if cfg.Bearer == nil && cfg.APIKeys == nil {
		panic("middleware.Auth: set AuthConfig.Bearer, AuthConfig.APIKeys or both")
	}
	if cfg.APIKeyHeader == "" {
		cfg.APIKeyHeader = DefaultAPIKeyHeader
	}
	if cfg.Realm == "" {
		cfg.Realm = DefaultRealm
	}
	if cfg.MaxCredentialLength <= 0 {
		cfg.MaxCredentialLength = DefaultMaxCredentialLength
	}
	if !isToken(cfg.APIKeyHeader) {
		panic("middleware.Auth: APIKeyHeader " + cfg.APIKeyHeader + " is not a valid header name")
	}
	if !isQuotable(cfg.Realm) {
		panic("middleware.Auth: Realm must not contain '\"', '\\' or control characters")
	}
	a := &authenticator{
		bearer:    cfg.Bearer,
		apiKeys:   cfg.APIKeys,
		keyHeader: cfg.APIKeyHeader,
		optional:  cfg.Optional,
		maxLen:    cfg.MaxCredentialLength,
	}
	a.bearerFast, _ = cfg.Bearer.(BytesVerifier)
	a.apiKeysFast, _ = cfg.APIKeys.(BytesVerifier)

	base := [numSchemes]string{
		schBearer: `Bearer realm="` + cfg.Realm + `"`,
		schAPIKey: `APIKey realm="` + cfg.Realm + `", header="` + cfg.APIKeyHeader + `"`,
	}
	for s := range numSchemes {
		for k := range numKinds {
			ch := base[s]
			if e := oauthError[k]; e != "" {
				ch += `, error="` + e + `", error_description="` + authFailures[s][k].Message + `"`
			}
			a.challenges[s][k] = ch
		}
	}
	if cfg.Bearer != nil {
		a.missing = append(a.missing, base[schBearer])
	}
	if cfg.APIKeys != nil {
		a.missing = append(a.missing, base[schAPIKey])
	}
	a.forbidden = base[schBearer] + `, error="insufficient_scope"`
	return fx.Declare(a.handle, authDeclaration(cfg))
}

func (a *authenticator) handle(c *fx.Ctx, next fx.Next) error {
	h := &c.RequestCtx().Request.Header
	c.SetValue(authKey{}, a)
	var authz, key []byte
	var repeated bool
	if a.bearer != nil {
		if authz, repeated = singleton(h, "Authorization"); repeated {
			return a.fail(c, schBearer, kRepeated)
		}
	}
	if a.apiKeys != nil {
		if key, repeated = singleton(h, a.keyHeader); repeated {
			return a.fail(c, schAPIKey, kRepeated)
		}
	}

	var (
		p   *Principal
		err error
		s   scheme
	)
	switch {
	case len(authz) > 0 && len(key) > 0:
		return a.fail(c, schBearer, kMultiple)
	case len(authz) > 0:
		s = schBearer
		tok, k := a.parseBearer(authz)
		if k != kMissing {
			return a.fail(c, s, k)
		}
		if a.bearerFast != nil {
			p, err = a.bearerFast.VerifyBytes(c, tok)
		} else {
			p, err = a.bearer.Verify(c, string(tok))
		}
	case len(key) > 0:
		s = schAPIKey
		if len(key) > a.maxLen {
			return a.fail(c, s, kTooLong)
		}
		if !isVisibleASCII(key) {
			return a.fail(c, s, kMalformedHeader)
		}
		if a.apiKeysFast != nil {
			p, err = a.apiKeysFast.VerifyBytes(c, key)
		} else {
			p, err = a.apiKeys.Verify(c, string(key))
		}
	default:
		if a.optional {
			return next()
		}
		return a.fail(c, schBearer, kMissing)
	}
	if err != nil {
		var fe *fx.Error
		if errors.As(err, &fe) {
			return err
		}
		return a.fail(c, s, classify(err))
	}
	if p == nil {
		return errNilPrincipal
	}
	c.SetValue(principalKey{}, p)
	return next()
}

// singleton returns the value of the header name, which may appear once,
// and whether it appears more than once. Authorization and an API key are
// one credential each (RFC 9110 section 5.3: a field that is not a list
// must not be repeated); two lines are ambiguous, and reading either one
// (fasthttp's Peek takes the first, a proxy may take the last) would let
// a proxy and fx authenticate different principals. Auth refuses them
// with 401 FX_UNAUTHENTICATED (reason multiple_credentials, challenge
// error="invalid_request"), like every malformed credential (the auth
// contract in docs/auth.md), rather than 400: the client's remedy is to send one credential,
// and it keeps the 401 contract clients branch on. Cost: one pass over
// the request's header lines, no allocation (fasthttp's PeekAll reuses a
// per-request buffer).
func singleton(h *fasthttp.RequestHeader, name string) ([]byte, bool) {
	vs := h.PeekAll(name)
	if len(vs) == 0 {
		return nil, false
	}
	return vs[0], len(vs) > 1
}

// fail sets the challenge of failure k and returns its shared error.
func (a *authenticator) fail(c *fx.Ctx, s scheme, k kind) error {
	a.challenge(c, s, k)
	return authFailures[s][k]
}

// challenge writes the WWW-Authenticate header(s) of failure k.
func (a *authenticator) challenge(c *fx.Ctx, s scheme, k kind) {
	if k == kMissing {
		rh := &c.RequestCtx().Response.Header
		rh.Del("WWW-Authenticate")
		for _, ch := range a.missing {
			rh.Add("WWW-Authenticate", ch)
		}
		return
	}
	c.SetHeader("WWW-Authenticate", a.challenges[s][k])
}

// parseBearer splits "Bearer <token>" and checks the token's syntax and
// length. It returns kMissing (meaning: no failure) with the token, or the
// failure.
func (a *authenticator) parseBearer(h []byte) ([]byte, kind) {
	const scheme = "bearer"
	if len(h) < len(scheme) || !strings.EqualFold(b2s(h[:len(scheme)]), scheme) ||
		(len(h) > len(scheme) && h[len(scheme)] != ' ') {
		return nil, kUnsupportedScheme
	}
	tok := h[len(scheme):]
	for len(tok) > 0 && tok[0] == ' ' {
		tok = tok[1:]
	}
	for len(tok) > 0 && (tok[len(tok)-1] == ' ' || tok[len(tok)-1] == '\t') {
		tok = tok[:len(tok)-1]
	}
	switch {
	case len(tok) == 0:
		return nil, kMalformedHeader
	case len(tok) > a.maxLen:
		return nil, kTooLong
	case !isB64Token(tok):
		return nil, kMalformedHeader
	}
	return tok, kMissing
}

// isB64Token reports whether b is RFC 6750 b64token:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(b []byte) bool {
	i := 0
	for ; i < len(b); i++ {
		ch := b[i]
		if !('a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9' ||
			ch == '-' || ch == '.' || ch == '_' || ch == '~' || ch == '+' || ch == '/') {
			break
		}
	}
	if i == 0 {
		return false
	}
	for ; i < len(b); i++ {
		if b[i] != '=' {
			return false
		}
	}
	return true
}

// isVisibleASCII reports whether b is non-empty VCHAR (0x21-0x7E).
func isVisibleASCII(b []byte) bool {
	for _, ch := range b {
		if ch < 0x21 || ch > 0x7e {
			return false
		}
	}
	return len(b) > 0
}

// isQuotable reports whether s can be the content of an RFC 9110
// quoted-string without escapes: qdtext (HTAB, SP, visible ASCII but '"'
// and '\', obs-text).
func isQuotable(s string) bool {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '"' || ch == '\\' || ch == 0x7f || (ch < 0x20 && ch != '\t') {
			return false
		}
	}
	return true
}

// isToken reports whether s is an RFC 9110 token (a valid header name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", ch) >= 0 {
			continue
		}
		return false
	}
	return true
}

// b2s views b as a string without copying. The string must not outlive b's
// contents; it is used only for comparisons and for verifiers of this
// package, which do not retain the credential.
func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// kind indexes the authentication failures.
type kind uint8

const (
	kMissing kind = iota
	kMalformedHeader
	kUnsupportedScheme
	kMultiple
	kRepeated
	kTooLong
	kMalformed
	kInvalid
	kSignature
	kAlgorithm
	kUnknownKey
	kExpired
	kNotYetValid
	kIssuer
	kAudience
	kClaims
	numKinds
)

// scheme indexes the credential schemes Auth reads.
type scheme uint8

const (
	schBearer scheme = iota
	schAPIKey
	numSchemes
)

// sentinels maps verifier errors to kinds, most specific first.
var sentinels = [...]struct {
	err error
	k   kind
}{
	{ErrMalformedCredential, kMalformed},
	{ErrAlgorithmNotAllowed, kAlgorithm},
	{ErrUnknownKey, kUnknownKey},
	{ErrInvalidSignature, kSignature},
	{ErrExpired, kExpired},
	{ErrNotYetValid, kNotYetValid},
	{ErrInvalidIssuer, kIssuer},
	{ErrInvalidAudience, kAudience},
	{ErrInvalidClaims, kClaims},
	{ErrInvalidCredential, kInvalid},
}

func classify(err error) kind {
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.k
		}
	}
	return kInvalid
}

// oauthError is the RFC 6750 error attribute of each kind's challenge:
// "" (no error attribute, for a request without credentials),
// invalid_request or invalid_token. RFC 6750 would send invalid_request
// with 400; the fx contract answers every authentication
// failure 401, so the attribute is kept and the status is 401.
var oauthError = [numKinds]string{
	kMissing:           "",
	kMalformedHeader:   "invalid_request",
	kUnsupportedScheme: "invalid_request",
	kMultiple:          "invalid_request",
	kRepeated:          "invalid_request",
	kTooLong:           "invalid_request",
	kMalformed:         "invalid_token",
	kInvalid:           "invalid_token",
	kSignature:         "invalid_token",
	kAlgorithm:         "invalid_token",
	kUnknownKey:        "invalid_token",
	kExpired:           "invalid_token",
	kNotYetValid:       "invalid_token",
	kIssuer:            "invalid_token",
	kAudience:          "invalid_token",
	kClaims:            "invalid_token",
}

// authFailures[scheme][kind] is the shared *fx.Error of each failure.
// Messages name the failure, never the credential, and contain no '"' or
// '\' so they can be the challenge's error_description as they are.
var authFailures = func() (t [numSchemes][numKinds]*fx.Error) {
	for s, noun := range [numSchemes]string{schBearer: "Bearer token", schAPIKey: "API key"} {
		msg := [numKinds]string{
			kMissing:           "Authentication required: no credentials were sent",
			kMalformedHeader:   "Malformed Authorization header: expected the Bearer scheme and one token",
			kUnsupportedScheme: "Unsupported authorization scheme: expected Bearer",
			kMultiple:          "More than one credential was sent: send either a Bearer token or an API key",
			kRepeated:          "More than one Authorization header was sent: send exactly one",
			kTooLong:           noun + " is too long",
			kMalformed:         noun + " is malformed",
			kInvalid:           noun + " is invalid",
			kSignature:         noun + " signature is invalid",
			kAlgorithm:         noun + " signing algorithm is not allowed",
			kUnknownKey:        noun + " signing key is unknown",
			kExpired:           noun + " has expired",
			kNotYetValid:       noun + " is not valid yet",
			kIssuer:            noun + " issuer is not accepted",
			kAudience:          noun + " audience is not accepted",
			kClaims:            noun + " claims are invalid",
		}
		if s == int(schAPIKey) {
			msg[kMalformedHeader] = "Malformed API key header"
			msg[kRepeated] = "More than one API key header was sent: send exactly one"
		}
		reason := [numKinds]string{
			kMissing:           ReasonMissingCredentials,
			kMalformedHeader:   ReasonMalformedCredentials,
			kUnsupportedScheme: ReasonUnsupportedScheme,
			kMultiple:          ReasonMultipleCredentials,
			kRepeated:          ReasonMultipleCredentials,
			kTooLong:           ReasonCredentialsTooLong,
			kMalformed:         ReasonMalformedCredentials,
			kInvalid:           ReasonInvalidCredentials,
			kSignature:         ReasonInvalidCredentials,
			kAlgorithm:         ReasonInvalidCredentials,
			kUnknownKey:        ReasonInvalidCredentials,
			kExpired:           ReasonExpired,
			kNotYetValid:       ReasonNotYetValid,
			kIssuer:            ReasonInvalidClaims,
			kAudience:          ReasonInvalidClaims,
			kClaims:            ReasonInvalidClaims,
		}
		for k := range numKinds {
			t[s][k] = fx.NewCatalogError(fx.ErrorCodes.Unauthenticated, msg[k], FailureDetails{Reason: reason[k]})
		}
	}
	return t
}()

// What this package declares for its 401 (Auth, RequireRoles,
// RequirePermissions, Tenant with MatchPrincipal), for documentation
// generators (package openapi) and fxtest's strict mode: written from the
// errors it sends (every failure of every scheme, and AuthenticatedSubject's),
// so details.reason is documented as the set they carry.
var declUnauthenticated = func() *fx.Error {
	var all []*fx.Error
	for s := range authFailures {
		all = append(all, authFailures[s][:]...)
	}
	return DeclareFailures(append(all, errAPIKeyRequired)...)[0]
}()

// challengeHeader is the WWW-Authenticate challenge of a 401 (and, for a
// bearer principal, of RequireRoles' 403: RFC 6750's insufficient_scope).
var challengeHeader = fx.HeaderDoc{Name: "WWW-Authenticate", Required: true, Statuses: []int{401},
	Description: "The challenge of the credentials the route accepts (RFC 9110 §11.6.1)."}

// Names of the security schemes Auth declares (the keys of the OpenAPI
// document's components.securitySchemes).
const (
	BearerSchemeName = "bearerAuth"
	APIKeySchemeName = "apiKeyAuth"
)

// authDeclaration is what Auth under cfg (defaults applied) declares: 401,
// and one security scheme per accepted credential (a bearer token, with
// the format its Verifier states through BearerFormatter, "JWT" for
// package middleware/jwt's; an API key in its header),
// any one of which a request may present; Optional lets requests without
// credentials through.
func authDeclaration(cfg AuthConfig) fx.Declaration {
	d := fx.Declaration{Errors: []*fx.Error{declUnauthenticated}, Anonymous: cfg.Optional,
		Headers: []fx.HeaderDoc{challengeHeader}}
	if cfg.Bearer != nil {
		s := fx.SecuritySchemeDoc{Name: BearerSchemeName, Type: "http", Scheme: "bearer",
			Description: "A bearer token in the Authorization header (RFC 6750)."}
		if f, ok := cfg.Bearer.(BearerFormatter); ok {
			switch s.BearerFormat = f.BearerFormat(); s.BearerFormat {
			case "":
			case "JWT":
				s.Description = "A JSON Web Token (RFC 7519) sent as a bearer token in the Authorization header (RFC 6750)."
			default:
				s.Description = "A bearer token (" + s.BearerFormat + ") in the Authorization header (RFC 6750)."
			}
		}
		d.Security = append(d.Security, s)
	}
	if cfg.APIKeys != nil {
		d.Security = append(d.Security, fx.SecuritySchemeDoc{Name: APIKeySchemeName, Type: "apiKey", In: "header",
			Param: cfg.APIKeyHeader, Description: "An API key in the " + cfg.APIKeyHeader + " header."})
	}
	return d
}
