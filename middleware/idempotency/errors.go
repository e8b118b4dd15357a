package idempotency

import (
	"strconv"

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
	errKeyReused = fx.NewCatalogError(fx.ErrorCodes.IdempotencyKeyReused,
		"This Idempotency-Key was already used for a different request; use a new key for a new request",
		middleware.FailureDetails{Reason: ReasonKeyReused})
	errInFlight = fx.NewCatalogError(fx.ErrorCodes.IdempotencyInFlight,
		"A request with this Idempotency-Key is still being processed; retry after the time in Retry-After",
		middleware.FailureDetails{Reason: ReasonInFlight})
	errMissingKey = fx.NewCatalogError(fx.ErrorCodes.IdempotencyKeyRequired,
		"This operation requires an Idempotency-Key header",
		middleware.FailureDetails{Reason: ReasonMissingKey})
	errMalformedKey = fx.NewCatalogError(fx.ErrorCodes.IdempotencyKeyRequired,
		"The Idempotency-Key header is malformed: send one key of 1 to 255 printable ASCII characters, quoted or bare",
		middleware.FailureDetails{Reason: ReasonMalformedKey})
	errUnavailable = fx.NewCatalogError(fx.ErrorCodes.ServiceUnavailable,
		"Idempotency keys cannot be checked right now; retry later with the same key",
		middleware.FailureDetails{Reason: ReasonUnavailable})
)

// declaration is what New declares for the routes of methods: its errors,
// the Idempotency-Key it reads (required when Config.Required; its schema
// is the format ParseKey accepts, bare or quoted), and the
// headers it sets: Idempotent-Replayed on a replay (an answer of what runs
// after it, never on its own errors nor those of the middleware before
// it), Retry-After on its 409 and 503.
func declaration(required bool, methods []string) fx.Declaration {
	return fx.Declaration{
		Methods: methods,
		Errors:  middleware.DeclareFailures(errMissingKey, errMalformedKey, errInFlight, errKeyReused, errUnavailable),
		Parameters: []fx.ParameterDoc{{Name: HeaderKey, In: "header", Required: required,
			Description: "A key unique to this operation (a UUID), bare or as a quoted string (1 to " + strconv.Itoa(MaxKeyLength) + " printable ASCII characters): a retry with the same key and the same request gets the first answer again instead of running twice.",
			Schema:      map[string]any{"type": "string", "minLength": 1, "maxLength": keyValueMaxLength, "pattern": keyValuePattern}}},
		Headers: []fx.HeaderDoc{
			{Name: HeaderReplayed, BeforeNext: true, Description: "true when the answer is the stored answer of an earlier request with the same Idempotency-Key.",
				Schema: map[string]any{"type": "string", "enum": []any{"true"}}},
			{Name: "Retry-After", Required: true, Statuses: []int{409, 503}, Description: "Seconds to wait before retrying.",
				Schema: map[string]any{"type": "string", "pattern": "^[0-9]+$"}},
		},
	}
}
