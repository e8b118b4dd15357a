package fx

// The catalog: every code the framework emits, with its status. Users
// name it two ways: ErrorCodes (the codes by name) and ErrorStatus
// (code → status). Inside the package the same table is the unexported
// constants below and statusOf, a switch over them: the framework never
// reads the two exported variables while serving, so a program that
// writes to them changes nothing on the wire.
//
// TestCatalogIsExact keeps the forms in step, and
// TestDocsCatalogTable keeps the table of docs/errors.md in step with them.

// The built-in error codes (ErrorCodes names each; see there for what
// each means).
const (
	// codeNotFound (404): no route matches the method and path.
	codeNotFound string = "FX_NOT_FOUND"
	// codeInternalError (500): a handler or middleware failed with
	// something other than an *Error, or panicked.
	codeInternalError string = "FX_INTERNAL_ERROR"
	// codeValidationError (422): the body or query failed validation, or
	// the body is not valid JSON.
	codeValidationError string = "FX_VALIDATION_ERROR"
	// codeUnauthenticated (401): credentials are absent, malformed, invalid
	// or expired.
	codeUnauthenticated string = "FX_UNAUTHENTICATED"
	// codeForbidden (403): the principal is recognised but lacks a role,
	// permission or tenant.
	codeForbidden string = "FX_FORBIDDEN"
	// codeTenantRequired (400): a tenant is required and none was resolved.
	codeTenantRequired string = "FX_TENANT_REQUIRED"
	// codePluginMissingDependency (500): a plugin depends on one never
	// registered.
	codePluginMissingDependency string = "FX_PLUGIN_MISSING_DEPENDENCY"
	// codePluginDependencyCycle (500): plugin dependencies form a cycle.
	codePluginDependencyCycle string = "FX_PLUGIN_DEPENDENCY_CYCLE"
	// codeWasmError (502): a WASM guest trapped, timed out or answered
	// badly.
	codeWasmError string = "FX_WASM_ERROR"
	// codeRouteHandlerRequired (500): Route was given a nil Handler.
	codeRouteHandlerRequired string = "FX_ROUTE_HANDLER_REQUIRED"
	// codeNextCalledMultipleTimes (500): a middleware called next twice.
	codeNextCalledMultipleTimes string = "FX_NEXT_CALLED_MULTIPLE_TIMES"
	// codeNodeInternalError (500): the net/http adapter failed to translate
	// a request or response. The wire code keeps the word NODE: clients
	// already match on it, and a code never changes once sent.
	codeNodeInternalError string = "FX_NODE_INTERNAL_ERROR"
	// codeBadRequest (400): the request could not be parsed, or its framing
	// or path is ambiguous.
	codeBadRequest string = "FX_BAD_REQUEST"
	// codePayloadTooLarge (413): the body is over Config.BodyLimit.
	codePayloadTooLarge string = "FX_PAYLOAD_TOO_LARGE"
	// codeRequestTimeout (408): the request was not read within
	// Config.ReadTimeout.
	codeRequestTimeout string = "FX_REQUEST_TIMEOUT"
	// codeHeadersTooLarge (431): the request headers are over
	// Config.HeaderLimit.
	codeHeadersTooLarge string = "FX_HEADERS_TOO_LARGE"
	// codeServiceUnavailable (503): the server is over capacity (its
	// connection limit, a bounded pool) or shutting down; sent with
	// Retry-After.
	codeServiceUnavailable string = "FX_SERVICE_UNAVAILABLE"
	// codeRateLimited (429): a rate limit refused the request; sent with
	// Retry-After and the IETF RateLimit and RateLimit-Policy headers.
	codeRateLimited string = "FX_RATE_LIMITED"
	// codeTimeout (504): the handler did not finish within its route's
	// deadline.
	codeTimeout string = "FX_TIMEOUT"
	// codeIdempotencyKeyReused (422): an Idempotency-Key was seen before
	// with a different request fingerprint (method, route, path, query or
	// body differ).
	codeIdempotencyKeyReused string = "FX_IDEMPOTENCY_KEY_REUSED"
	// codeIdempotencyInFlight (409): the first request with that
	// Idempotency-Key is still running; sent with Retry-After.
	codeIdempotencyInFlight string = "FX_IDEMPOTENCY_IN_FLIGHT"
	// codeIdempotencyKeyRequired (400): the route requires an
	// Idempotency-Key and none, or a malformed one, was sent.
	codeIdempotencyKeyRequired string = "FX_IDEMPOTENCY_KEY_REQUIRED"
	// codeUpgradeRequired (426): a WebSocket route (package websocket) was
	// sent a request that is not a WebSocket handshake; sent with
	// Upgrade: websocket (RFC 9110, section 15.5.22).
	codeUpgradeRequired string = "FX_UPGRADE_REQUIRED"
)

// statusOf returns the HTTP status of a built-in code, and false for any
// other code: a switch over constants, no allocation, no map read, and
// nothing user code can change.
func statusOf(code string) (int, bool) {
	switch code {
	case codeBadRequest, codeTenantRequired, codeIdempotencyKeyRequired:
		return 400, true
	case codeUnauthenticated:
		return 401, true
	case codeForbidden:
		return 403, true
	case codeNotFound:
		return 404, true
	case codeRequestTimeout:
		return 408, true
	case codePayloadTooLarge:
		return 413, true
	case codeIdempotencyInFlight:
		return 409, true
	case codeValidationError, codeIdempotencyKeyReused:
		return 422, true
	case codeUpgradeRequired:
		return 426, true
	case codeRateLimited:
		return 429, true
	case codeHeadersTooLarge:
		return 431, true
	case codeInternalError, codePluginMissingDependency, codePluginDependencyCycle,
		codeRouteHandlerRequired, codeNextCalledMultipleTimes, codeNodeInternalError:
		return 500, true
	case codeWasmError:
		return 502, true
	case codeServiceUnavailable:
		return 503, true
	case codeTimeout:
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
	status, ok := statusOf(code)
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

// errorCodes is the type of ErrorCodes: one field per built-in code (the
// constants above say what each means).
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

// ErrorCodes names every code the framework emits: compare a code with ErrorCodes.NotFound, raise one
// with NewCatalogError(fx.ErrorCodes.RateLimited, ...). Each field is its
// code in CamelCase (NotFound is "FX_NOT_FOUND"); docs/errors.md says
// what each means and when it is sent. Application codes must not start
// with "FX_"; use a namespace of your own ("APP_", "BILLING_"). Treat
// ErrorCodes as read-only: the core never reads ErrorCodes while serving
// (its 404s, 422s and transport errors keep their codes whatever is
// assigned here), but the kit's packages (middleware, websocket, ...) and
// your code name codes through it.
var ErrorCodes = errorCodes{
	NotFound:                "FX_NOT_FOUND",
	InternalError:           "FX_INTERNAL_ERROR",
	ValidationError:         "FX_VALIDATION_ERROR",
	Unauthenticated:         "FX_UNAUTHENTICATED",
	Forbidden:               "FX_FORBIDDEN",
	TenantRequired:          "FX_TENANT_REQUIRED",
	PluginMissingDependency: "FX_PLUGIN_MISSING_DEPENDENCY",
	PluginDependencyCycle:   "FX_PLUGIN_DEPENDENCY_CYCLE",
	WasmError:               "FX_WASM_ERROR",
	RouteHandlerRequired:    "FX_ROUTE_HANDLER_REQUIRED",
	NextCalledMultipleTimes: "FX_NEXT_CALLED_MULTIPLE_TIMES",
	NodeInternalError:       "FX_NODE_INTERNAL_ERROR",
	BadRequest:              "FX_BAD_REQUEST",
	PayloadTooLarge:         "FX_PAYLOAD_TOO_LARGE",
	RequestTimeout:          "FX_REQUEST_TIMEOUT",
	HeadersTooLarge:         "FX_HEADERS_TOO_LARGE",
	ServiceUnavailable:      "FX_SERVICE_UNAVAILABLE",
	RateLimited:             "FX_RATE_LIMITED",
	Timeout:                 "FX_TIMEOUT",
	IdempotencyKeyReused:    "FX_IDEMPOTENCY_KEY_REUSED",
	IdempotencyInFlight:     "FX_IDEMPOTENCY_IN_FLIGHT",
	IdempotencyKeyRequired:  "FX_IDEMPOTENCY_KEY_REQUIRED",
	UpgradeRequired:         "FX_UPGRADE_REQUIRED",
}

// ErrorStatus maps every built-in code to its HTTP status:
// status, ok := fx.ErrorStatus[code]. It lists
// exactly the codes the framework can emit and no other. The framework
// never reads it while serving (it has a switch of its own), so writing
// to this map changes nothing the framework sends. Cost: a map lookup.
var ErrorStatus = func() map[string]int {
	m := make(map[string]int, len(allCodes))
	for _, code := range allCodes {
		m[code], _ = statusOf(code)
	}
	return m
}()

// allCodes is the catalog in the order of docs/errors.md's table.
var allCodes = [...]string{
	codeNotFound, codeInternalError, codeValidationError, codeUnauthenticated,
	codeForbidden, codeTenantRequired, codePluginMissingDependency,
	codePluginDependencyCycle, codeWasmError, codeRouteHandlerRequired,
	codeNextCalledMultipleTimes, codeNodeInternalError, codeBadRequest,
	codePayloadTooLarge, codeRequestTimeout, codeHeadersTooLarge,
	codeServiceUnavailable, codeRateLimited, codeTimeout,
	codeIdempotencyKeyReused, codeIdempotencyInFlight, codeIdempotencyKeyRequired,
	codeUpgradeRequired,
}
