package fx

// The catalog: every code the framework emits, with its status. It can
// be named four ways that say the same thing; use the first two:
//
//   - the constants below (CodeNotFound, ...), which code compares against
//     and which cost nothing to read: use them to name a code;
//   - StatusOf, the lookup the error boundary and the subpackages use: a
//     switch over constants, so no request ever reads a map that user code
//     could write to: use it to find a code's status;
//   - ErrorCodes and ErrorStatus, the pinned names of the original contract,
//     kept for compatibility and built from the constants. The framework
//     never reads them while serving; new code should not either.
//
// TestCatalogIsExact keeps the four in step, and
// TestReadmeCatalogTable keeps the README's table in step with them.

// The built-in error codes: name a code with these (ErrorCodes is the
// contract's compatibility name for the same list). Application codes
// must not start with "FX_"; use a namespace of your own ("APP_",
// "BILLING_").
const (
	// CodeNotFound (404): no route matches the method and path.
	CodeNotFound string = "FX_NOT_FOUND"
	// CodeInternalError (500): a handler or middleware failed with
	// something other than an *Error, or panicked.
	CodeInternalError string = "FX_INTERNAL_ERROR"
	// CodeValidationError (422): the body or query failed validation, or
	// the body is not valid JSON.
	CodeValidationError string = "FX_VALIDATION_ERROR"
	// CodeUnauthenticated (401): credentials are absent, malformed, invalid
	// or expired.
	CodeUnauthenticated string = "FX_UNAUTHENTICATED"
	// CodeForbidden (403): the principal is recognised but lacks a role,
	// permission or tenant.
	CodeForbidden string = "FX_FORBIDDEN"
	// CodeTenantRequired (400): a tenant is required and none was resolved.
	CodeTenantRequired string = "FX_TENANT_REQUIRED"
	// CodePluginMissingDependency (500): a plugin depends on one never
	// registered.
	CodePluginMissingDependency string = "FX_PLUGIN_MISSING_DEPENDENCY"
	// CodePluginDependencyCycle (500): plugin dependencies form a cycle.
	CodePluginDependencyCycle string = "FX_PLUGIN_DEPENDENCY_CYCLE"
	// CodeWasmError (502): a WASM guest trapped, timed out or answered
	// badly.
	CodeWasmError string = "FX_WASM_ERROR"
	// CodeRouteHandlerRequired (500): Route was given a nil Handler.
	CodeRouteHandlerRequired string = "FX_ROUTE_HANDLER_REQUIRED"
	// CodeNextCalledMultipleTimes (500): a middleware called next twice.
	CodeNextCalledMultipleTimes string = "FX_NEXT_CALLED_MULTIPLE_TIMES"
	// CodeNodeInternalError (500): the net/http adapter failed to translate
	// a request or response. The name is kept from the original contract.
	CodeNodeInternalError string = "FX_NODE_INTERNAL_ERROR"
	// CodeBadRequest (400): the request could not be parsed, or its framing
	// or path is ambiguous.
	CodeBadRequest string = "FX_BAD_REQUEST"
	// CodePayloadTooLarge (413): the body is over Config.BodyLimit.
	CodePayloadTooLarge string = "FX_PAYLOAD_TOO_LARGE"
	// CodeRequestTimeout (408): the request was not read within
	// Config.ReadTimeout.
	CodeRequestTimeout string = "FX_REQUEST_TIMEOUT"
	// CodeHeadersTooLarge (431): the request headers are over
	// Config.HeaderLimit.
	CodeHeadersTooLarge string = "FX_HEADERS_TOO_LARGE"
	// CodeServiceUnavailable (503): the server is over capacity (its
	// connection limit, a bounded pool) or shutting down; sent with
	// Retry-After.
	CodeServiceUnavailable string = "FX_SERVICE_UNAVAILABLE"
	// CodeRateLimited (429): a rate limit refused the request; sent with
	// Retry-After and the IETF RateLimit and RateLimit-Policy headers.
	CodeRateLimited string = "FX_RATE_LIMITED"
	// CodeTimeout (504): the handler did not finish within its route's
	// deadline.
	CodeTimeout string = "FX_TIMEOUT"
	// CodeIdempotencyKeyReused (422): an Idempotency-Key was seen before
	// with a different request fingerprint (method, route, path, query or
	// body differ).
	CodeIdempotencyKeyReused string = "FX_IDEMPOTENCY_KEY_REUSED"
	// CodeIdempotencyInFlight (409): the first request with that
	// Idempotency-Key is still running; sent with Retry-After.
	CodeIdempotencyInFlight string = "FX_IDEMPOTENCY_IN_FLIGHT"
	// CodeIdempotencyKeyRequired (400): the route requires an
	// Idempotency-Key and none, or a malformed one, was sent.
	CodeIdempotencyKeyRequired string = "FX_IDEMPOTENCY_KEY_REQUIRED"
	// CodeUpgradeRequired (426): a WebSocket route (package websocket) was
	// sent a request that is not a WebSocket handshake; sent with
	// Upgrade: websocket (RFC 9110, section 15.5.22).
	CodeUpgradeRequired string = "FX_UPGRADE_REQUIRED"
)

// StatusOf returns the HTTP status of a built-in code, and false for any
// other code. It is a switch over constants: no allocation, no map read,
// and nothing user code can change. Use it, with the Code constants, to
// look a status up; ErrorStatus is the same table under the contract's
// compatibility name.
func StatusOf(code string) (int, bool) {
	switch code {
	case CodeBadRequest, CodeTenantRequired, CodeIdempotencyKeyRequired:
		return 400, true
	case CodeUnauthenticated:
		return 401, true
	case CodeForbidden:
		return 403, true
	case CodeNotFound:
		return 404, true
	case CodeRequestTimeout:
		return 408, true
	case CodePayloadTooLarge:
		return 413, true
	case CodeIdempotencyInFlight:
		return 409, true
	case CodeValidationError, CodeIdempotencyKeyReused:
		return 422, true
	case CodeUpgradeRequired:
		return 426, true
	case CodeRateLimited:
		return 429, true
	case CodeHeadersTooLarge:
		return 431, true
	case CodeInternalError, CodePluginMissingDependency, CodePluginDependencyCycle,
		CodeRouteHandlerRequired, CodeNextCalledMultipleTimes, CodeNodeInternalError:
		return 500, true
	case CodeWasmError:
		return 502, true
	case CodeServiceUnavailable:
		return 503, true
	case CodeTimeout:
		return 504, true
	}
	return 0, false
}

// NewCatalogError returns an *Error for a built-in code with the status
// the catalog gives it, so a middleware or adapter never pairs a status
// with a code by hand. A code outside the catalog is a programming error:
// the result then has status 500 (and the boundary reports the misuse of
// the FX_ prefix once, as for NewError).
func NewCatalogError(code, message string, details ...any) *Error {
	status, ok := StatusOf(code)
	if !ok {
		status = 500
	}
	return NewError(status, code, message, details...)
}

// NotFound returns the error the App answers for an unmatched request,
// for c's method and path: 404 FX_NOT_FOUND, "Route GET /x not found". A
// handler serving a namespace of its own (package static's files) returns
// it for a missing entry, so that a client cannot tell a missing file from
// a missing route. Cost: the message and the *Error are allocated.
func NotFound(c *Ctx) error { return notFoundHandler(c) }

// catalogError is NewCatalogError for the core's own codes.
func catalogError(code, message string, details ...any) *Error {
	return NewCatalogError(code, message, details...)
}

// internalErrorMessage is the fixed production message of FX_INTERNAL_ERROR.
const internalErrorMessage = "Internal server error"

// errorCodes is the type of ErrorCodes: one field per built-in code (see
// the Code constants for what each means).
type errorCodes struct {
	NotFound                string
	InternalError           string
	ValidationError         string
	Unauthenticated         string
	Forbidden               string
	TenantRequired          string
	PluginMissingDependency string
	PluginDependencyCycle   string
	WasmError               string
	RouteHandlerRequired    string
	NextCalledMultipleTimes string
	NodeInternalError       string
	BadRequest              string
	PayloadTooLarge         string
	RequestTimeout          string
	HeadersTooLarge         string
	ServiceUnavailable      string
	RateLimited             string
	Timeout                 string
	IdempotencyKeyReused    string
	IdempotencyInFlight     string
	IdempotencyKeyRequired  string
	UpgradeRequired         string
}

// ErrorCodes lists every code the framework emits, by name, as in the
// original contract (FX_ERROR_CODES). It is the contract's compatibility
// name: use the Code constants instead, which the compiler checks and
// which cannot be reassigned. Changing a field changes nothing the
// framework sends.
var ErrorCodes = errorCodes{
	NotFound:                CodeNotFound,
	InternalError:           CodeInternalError,
	ValidationError:         CodeValidationError,
	Unauthenticated:         CodeUnauthenticated,
	Forbidden:               CodeForbidden,
	TenantRequired:          CodeTenantRequired,
	PluginMissingDependency: CodePluginMissingDependency,
	PluginDependencyCycle:   CodePluginDependencyCycle,
	WasmError:               CodeWasmError,
	RouteHandlerRequired:    CodeRouteHandlerRequired,
	NextCalledMultipleTimes: CodeNextCalledMultipleTimes,
	NodeInternalError:       CodeNodeInternalError,
	BadRequest:              CodeBadRequest,
	PayloadTooLarge:         CodePayloadTooLarge,
	RequestTimeout:          CodeRequestTimeout,
	HeadersTooLarge:         CodeHeadersTooLarge,
	ServiceUnavailable:      CodeServiceUnavailable,
	RateLimited:             CodeRateLimited,
	Timeout:                 CodeTimeout,
	IdempotencyKeyReused:    CodeIdempotencyKeyReused,
	IdempotencyInFlight:     CodeIdempotencyInFlight,
	IdempotencyKeyRequired:  CodeIdempotencyKeyRequired,
	UpgradeRequired:         CodeUpgradeRequired,
}

// ErrorStatus maps every built-in code to its HTTP status (FX_ERROR_STATUS
// of the original contract). It lists exactly the codes the framework can
// emit and no other. It is the contract's compatibility name: use StatusOf
// instead. It is never read while serving (the framework uses StatusOf),
// so writing to this map changes nothing the framework sends.
var ErrorStatus = func() map[string]int {
	m := make(map[string]int, len(allCodes))
	for _, code := range allCodes {
		m[code], _ = StatusOf(code)
	}
	return m
}()

// allCodes is the catalog in the order of the README's table.
var allCodes = [...]string{
	CodeNotFound, CodeInternalError, CodeValidationError, CodeUnauthenticated,
	CodeForbidden, CodeTenantRequired, CodePluginMissingDependency,
	CodePluginDependencyCycle, CodeWasmError, CodeRouteHandlerRequired,
	CodeNextCalledMultipleTimes, CodeNodeInternalError, CodeBadRequest,
	CodePayloadTooLarge, CodeRequestTimeout, CodeHeadersTooLarge,
	CodeServiceUnavailable, CodeRateLimited, CodeTimeout,
	CodeIdempotencyKeyReused, CodeIdempotencyInFlight, CodeIdempotencyKeyRequired,
	CodeUpgradeRequired,
}
