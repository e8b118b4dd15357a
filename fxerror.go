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
// pooled buffer; with Prebuild, the envelope is encoded once and copied.
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

// With returns a copy of e whose Details are details: the same Status,
// Code and Message, so a declared error (one listed in Route.Errors or a
// middleware's Declaration, kept in a package variable) is answered with
// details of this request without repeating its status, code and
// message:
//
//	var ErrOrderNotFound = fx.NewError(404, "APP_ORDER_NOT_FOUND", "No such order", OrderRef{})
//	...
//	return nil, ErrOrderNotFound.With(OrderRef{ID: id})
//
// e itself is never modified, so it stays what was declared and, when
// prebuilt (Prebuild), still costs no allocation where it is returned as
// is. Declare the error with a zero value of its details' type (as above)
// and the OpenAPI document types "details" by it.
//
// Cost: one allocation for the copy (plus boxing details, if it is not
// a pointer, map or slice); the copy is not prebuilt, so its envelope is
// encoded per request. With on a nil *Error returns nil.
func (e *Error) With(details any) *Error {
	if e == nil {
		return nil
	}
	c := *e
	c.Details = details
	return &c
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
