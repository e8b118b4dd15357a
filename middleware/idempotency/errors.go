package idempotency

import (
	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
)

// Reasons: details.reason of the errors New answers with (the envelope's
// details are a middleware.FailureDetails), for clients that branch on
// them.
const (
	ReasonKeyReused    = "idempotency_key_reused"    // 422: same key, another request
	ReasonInFlight     = "idempotency_in_flight"     // 409: the first request is still running
	ReasonMissingKey   = "missing_idempotency_key"   // 400: Config.Required and no key
	ReasonMalformedKey = "malformed_idempotency_key" // 400: a key that ParseKey refuses, or several
	ReasonUnavailable  = "idempotency_unavailable"   // 503: the Store failed (fail closed)
)

// The errors New returns. Malformed keys get FX_IDEMPOTENCY_KEY_REQUIRED
// rather than FX_BAD_REQUEST: the catalog and the IETF draft give the key
// its own 400, and a client that branches on the code learns that the key
// is what to fix (the reason tells a missing one from a malformed one).
var (
	errKeyReused = fx.NewCatalogError(fx.CodeIdempotencyKeyReused,
		"This Idempotency-Key was already used for a different request; use a new key for a new request",
		middleware.FailureDetails{Reason: ReasonKeyReused})
	errInFlight = fx.NewCatalogError(fx.CodeIdempotencyInFlight,
		"A request with this Idempotency-Key is still being processed; retry after the time in Retry-After",
		middleware.FailureDetails{Reason: ReasonInFlight})
	errMissingKey = fx.NewCatalogError(fx.CodeIdempotencyKeyRequired,
		"This operation requires an Idempotency-Key header",
		middleware.FailureDetails{Reason: ReasonMissingKey})
	errMalformedKey = fx.NewCatalogError(fx.CodeIdempotencyKeyRequired,
		"The Idempotency-Key header is malformed: send one key of 1 to 255 printable ASCII characters, quoted or bare",
		middleware.FailureDetails{Reason: ReasonMalformedKey})
	errUnavailable = fx.NewCatalogError(fx.CodeServiceUnavailable,
		"Idempotency keys cannot be checked right now; retry later with the same key",
		middleware.FailureDetails{Reason: ReasonUnavailable})
)
