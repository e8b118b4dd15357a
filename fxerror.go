package fx

import (
	"fmt"
	"strconv"
)

// Error is an expected failure with a stable, machine-readable code. Return
// one (or panic with one) from a handler or middleware and the client
// receives status Status and the envelope
//
//	{"error":{"code":Code,"message":Message,"details":Details}}
//
// where "details" is present only when Details is non-nil and does not
// encode to null or {}. An *Error found anywhere in an error chain
// (errors.As) is used, so wrapping with fmt.Errorf("...: %w", err) keeps it.
//
// An *Error held in a package-level variable and returned as is costs no
// allocation on the response path: the envelope is written straight into a
// pooled buffer.
//
// Status should be 400–599; any other value is sent as 500 (an envelope on a
// 2xx response would break clients that branch on status) and logged as a
// misuse. Codes starting with "FX_" are reserved for the framework.
type Error struct {
	Status  int
	Code    string
	Message string
	Details any
}

// NewError returns an *Error. Details is optional; when given, its first
// value becomes Error.Details (further values are ignored).
//
// NewError with a code starting with "FX_" that is not in ErrorStatus still
// works, but the App's logger reports it once per code as a misuse: the FX_
// prefix is reserved for codes the framework emits.
func NewError(status int, code, message string, details ...any) *Error {
	e := &Error{Status: status, Code: code, Message: message}
	if len(details) > 0 {
		e.Details = details[0]
	}
	return e
}

// Error implements the error interface as "CODE (status): message".
func (e *Error) Error() string {
	if e == nil {
		return "<nil *fx.Error>"
	}
	return e.Code + " (" + strconv.Itoa(e.Status) + "): " + e.Message
}

// Format lets %+v print the details too; %v and %s print Error(), %q
// quotes it, and width and flags apply as for a string.
func (e *Error) Format(f fmt.State, verb rune) {
	s := e.Error()
	if verb == 'v' && f.Flag('+') && e != nil && e.Details != nil {
		s += fmt.Sprintf(" details=%+v", e.Details)
	}
	if verb == 'v' {
		verb = 's'
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), s)
}

// errorCodes is the type of ErrorCodes: one field per built-in code.
type errorCodes struct {
	// NotFound (404): no route matches the method and path.
	NotFound string
	// InternalError (500): a handler or middleware failed with something
	// other than an *Error, or panicked.
	InternalError string
	// ValidationError (422): the body or query failed validation, or the
	// body is not valid JSON.
	ValidationError string
	// Unauthenticated (401): credentials are absent, malformed, invalid or
	// expired.
	Unauthenticated string
	// Forbidden (403): the principal is recognised but lacks a role,
	// permission or tenant.
	Forbidden string
	// TenantRequired (400): a tenant is required and none was resolved.
	TenantRequired string
	// PluginMissingDependency (500): a plugin depends on one never registered.
	PluginMissingDependency string
	// PluginDependencyCycle (500): plugin dependencies form a cycle.
	PluginDependencyCycle string
	// WasmError (502): a WASM guest trapped, timed out or answered badly.
	WasmError string
	// RouteHandlerRequired (500): Route was given a nil Handler.
	RouteHandlerRequired string
	// NextCalledMultipleTimes (500): a middleware called next twice.
	NextCalledMultipleTimes string
	// NodeInternalError (500): the net/http adapter failed to translate a
	// request or response. The name is kept from the original contract.
	NodeInternalError string
	// BadRequest (400): the request could not be parsed.
	BadRequest string
	// PayloadTooLarge (413): the body is over Config.BodyLimit.
	PayloadTooLarge string
	// RequestTimeout (408): the request was not read within
	// Config.ReadTimeout.
	RequestTimeout string
	// HeadersTooLarge (431): the request headers are over
	// Config.HeaderLimit.
	HeadersTooLarge string
	// ServiceUnavailable (503): the server is over its concurrency limit or
	// a bounded resource (such as a WASM instance pool) is exhausted.
	ServiceUnavailable string
}

// ErrorCodes lists every code the framework emits. Application codes must
// not start with "FX_"; use a namespace of your own ("APP_", "BILLING_").
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
}

// ErrorStatus maps every built-in code to its HTTP status. It lists exactly
// the codes the framework can emit and no other. Treat it as read-only.
var ErrorStatus = map[string]int{
	ErrorCodes.NotFound:                404,
	ErrorCodes.InternalError:           500,
	ErrorCodes.ValidationError:         422,
	ErrorCodes.Unauthenticated:         401,
	ErrorCodes.Forbidden:               403,
	ErrorCodes.TenantRequired:          400,
	ErrorCodes.PluginMissingDependency: 500,
	ErrorCodes.PluginDependencyCycle:   500,
	ErrorCodes.WasmError:               502,
	ErrorCodes.RouteHandlerRequired:    500,
	ErrorCodes.NextCalledMultipleTimes: 500,
	ErrorCodes.NodeInternalError:       500,
	ErrorCodes.BadRequest:              400,
	ErrorCodes.PayloadTooLarge:         413,
	ErrorCodes.RequestTimeout:          408,
	ErrorCodes.HeadersTooLarge:         431,
	ErrorCodes.ServiceUnavailable:      503,
}

// internalErrorMessage is the fixed production message of FX_INTERNAL_ERROR.
const internalErrorMessage = "Internal server error"

// catalogError returns a new *Error for a built-in code, with the status
// from ErrorStatus.
func catalogError(code, message string, details ...any) *Error {
	return NewError(ErrorStatus[code], code, message, details...)
}
