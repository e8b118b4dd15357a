package fx

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"

	"github.com/fxhq/fx/validate"
	json "github.com/goccy/go-json"
)

// ValidationIssue is one element of details.issues in a 422
// FX_VALIDATION_ERROR envelope.
type ValidationIssue struct {
	Location string   `json:"location"` // "body" or "query"
	Path     []string `json:"path"`     // never null on the wire: [] for the value itself
	Message  string   `json:"message"`
}

// validationDetails is the details object of FX_VALIDATION_ERROR.
type validationDetails struct {
	Issues []ValidationIssue `json:"issues"`
}

// ValidationMessage is the fixed message of FX_VALIDATION_ERROR.
const ValidationMessage = "Request validation failed"

// NewValidationError returns the 422 FX_VALIDATION_ERROR *Error with
// message "Request validation failed" and details {"issues": issues}. A nil
// Path is sent as [], nil issues as [].
func NewValidationError(issues []ValidationIssue) *Error {
	if issues == nil {
		issues = []ValidationIssue{}
	}
	for i := range issues {
		if issues[i].Path == nil {
			issues[i].Path = []string{}
		}
	}
	return catalogError(ErrorCodes.ValidationError, ValidationMessage, validationDetails{Issues: issues})
}

// bodyIssue is the 422 for a body that cannot be decoded at all.
func bodyIssue(path []string, msg string) *Error {
	return NewValidationError([]ValidationIssue{{Location: "body", Path: path, Message: msg}})
}

// JSONBody decodes the request body as JSON into a T, with goccy/go-json,
// for handlers that do not use a route contract. The body must be exactly
// one JSON value (validate.CheckJSON: no trailing data, no duplicate keys,
// valid UTF-8, no number beyond a float64) sent with a JSON Content-Type or none; an empty body,
// malformed JSON or a value of the wrong type gives a 422
// FX_VALIDATION_ERROR with one issue at location "body" (the path names the
// field when the decoder knows it): return that error as is. Only the
// first type error is reported; a route contract with validate.Struct[T]
// reports all of them. Cost: one scan of the body (no allocation) plus the
// decode.
func JSONBody[T any](c *Ctx) (T, error) {
	var v T
	body := c.rc.Request.Body()
	if isBlank(body) {
		return v, bodyIssue(nil, "Request body is empty; a JSON value is required")
	}
	if !jsonContentType(c) {
		return v, NewValidationError([]ValidationIssue{contentTypeIssue})
	}
	if err := validate.CheckJSON(body); err != nil {
		return v, NewValidationError([]ValidationIssue{jsonIssue(err)})
	}
	if err := decodeJSON(body, &v); err != nil {
		return v, err
	}
	return v, nil
}

// contentTypeIssue is the issue for a body sent as something else than JSON.
var contentTypeIssue = ValidationIssue{Location: "body", Path: []string{},
	Message: "Content-Type must be application/json"}

// jsonContentType accepts no Content-Type, application/json and any
// application/*+json, with parameters (charset) ignored.
func jsonContentType(c *Ctx) bool {
	ct := c.rc.Request.Header.ContentType()
	if len(ct) == 0 {
		return true
	}
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = bytes.TrimSpace(ct)
	const app = "application/"
	if len(ct) < len(app) || !bytes.EqualFold(ct[:len(app)], []byte(app)) {
		return false
	}
	sub := ct[len(app):]
	return bytes.EqualFold(sub, []byte("json")) ||
		(len(sub) > 5 && bytes.EqualFold(sub[len(sub)-5:], []byte("+json")))
}

// decodeJSON decodes body into dst and translates failures into a 422 that
// names JSON kinds, never Go types.
func decodeJSON(body []byte, dst any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = bodyIssue(nil, "Request body could not be decoded")
		}
	}()
	if err := json.Unmarshal(body, dst); err != nil {
		return translateDecodeError(err)
	}
	return nil
}

func translateDecodeError(err error) *Error {
	switch e := err.(type) {
	case *json.UnmarshalTypeError:
		var path []string
		if e.Field != "" {
			path = strings.Split(e.Field, ".")
		}
		return bodyIssue(path, fmt.Sprintf("Expected %s, got %s", jsonKind(e.Type), e.Value))
	case *json.SyntaxError:
		return bodyIssue(nil, fmt.Sprintf("Request body is not valid JSON (at byte %d)", e.Offset))
	}
	return bodyIssue(nil, "Request body is not valid JSON")
}

// jsonKind names the JSON kind a Go type expects.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a value"
}
