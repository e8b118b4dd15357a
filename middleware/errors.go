package middleware

import (
	"errors"

	"github.com/fxhq/fx"
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
// details.reason of every error this package returns, for clients that
// branch on them (refresh on "expired", re-login on "invalid_credentials").
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
	ReasonMissingRole          = "missing_role"          // 403
	ReasonMissingPermission    = "missing_permission"    // 403
	ReasonTenantMismatch       = "tenant_mismatch"       // 403: principal of another tenant
	ReasonMissingTenant        = "missing_tenant"        // 400: none resolved
	ReasonMalformedTenant      = "malformed_tenant"      // 400: present but not a valid tenant ID
	ReasonConflictingTenant    = "conflicting_tenant"    // 400: header and subdomain disagree
	ReasonRepeatedOrigin       = "repeated_origin"       // 400: CORS got more than one Origin header
)

// FailureDetails is the Details of every *fx.Error this package returns:
// on the wire, "details":{"reason":"expired"}.
type FailureDetails struct {
	Reason string `json:"reason"`
}

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

var (
	errMissingRole = fx.NewCatalogError(fx.ErrorCodes.Forbidden,
		"Forbidden: the principal lacks a required role", FailureDetails{Reason: ReasonMissingRole})
	errMissingPermission = fx.NewCatalogError(fx.ErrorCodes.Forbidden,
		"Forbidden: the principal lacks a required permission", FailureDetails{Reason: ReasonMissingPermission})
	errTenantMismatch = fx.NewCatalogError(fx.ErrorCodes.Forbidden,
		"Forbidden: the principal does not belong to the requested tenant", FailureDetails{Reason: ReasonTenantMismatch})
	errConflictingTenant = fx.NewCatalogError(fx.ErrorCodes.BadRequest,
		"Tenant header and subdomain name different tenants", FailureDetails{Reason: ReasonConflictingTenant})
	errNilPrincipal = fx.NewCatalogError(fx.ErrorCodes.InternalError,
		"middleware: Verifier returned neither a principal nor an error")
)
