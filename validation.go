package fx

import (
	"bytes"
	"reflect"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/fxhq/fx/validate"
)

// ValidationIssue is one element of details.issues in a 422
// FX_VALIDATION_ERROR envelope.
type ValidationIssue struct {
	Location string   `json:"location"` // "body" or "query"
	Path     []string `json:"path"`     // never null on the wire: [] for the value itself
	Message  string   `json:"message"`
}

// validationDetails is the details object of FX_VALIDATION_ERROR.
// Truncated is true when there were more issues than the response lists
// (Config.MaxIssues, or the size bound of NewValidationError).
type validationDetails struct {
	Issues    []ValidationIssue `json:"issues"`
	Truncated bool              `json:"truncated,omitempty"`
}

// validationMessage is the fixed message of FX_VALIDATION_ERROR.
const validationMessage = "Request validation failed"

// NewValidationError returns the 422 FX_VALIDATION_ERROR *Error with
// message "Request validation failed" and details {"issues": issues}: the
// envelope a route contract sends, for checks a schema cannot express (a
// rule across fields, a lookup). Return it from a handler or middleware,
// and clients handle those issues exactly as a contract's. Issues are
// listed in the order given (a contract sorts its own by location and
// path). A nil Path is sent as [], nil issues as []. Cost: each call
// allocates the *Error and its details (a failing request's path only).
//
// The details stay small whatever the issues hold (no
// request makes an error response larger than about 64 KiB, and issues
// echo client input: a 1 MB key is a path segment): a message longer than
// 512 bytes and a path segment longer than 128 bytes are cut (on a
// character boundary) and end in "…"; a path deeper than 32 segments keeps
// its first 31 and "…"; and issues are listed only while their encoded
// size stays under 60 KiB. When issues are left out, details also holds
// "truncated": true. A route contract also stops at Config.MaxIssues.
func NewValidationError(issues []ValidationIssue) *Error {
	return newValidationError(issues, false)
}

// Bounds of one validation envelope (see NewValidationError).
const (
	maxMessageBytes = 512
	maxSegmentBytes = 128
	maxPathDepth    = 32
	maxIssuesBytes  = 60 << 10
)

// newValidationError is NewValidationError for a list already known to be
// truncated.
func newValidationError(issues []ValidationIssue, truncated bool) *Error {
	if issues == nil {
		issues = []ValidationIssue{}
	}
	// quick: an upper bound of the encoded size read off the lengths
	// alone (every byte a six-byte escape); the byte-by-byte bound runs
	// only when the quick one passes maxIssuesBytes, and cuts the list
	// exactly where it alone would.
	quick := 0
	for i := range issues {
		is := &issues[i]
		if is.Path == nil {
			is.Path = []string{}
		}
		boundIssue(is)
		quick += quickIssueSize(is)
	}
	if quick > maxIssuesBytes {
		size := 0
		for i := range issues {
			if size += issueSize(&issues[i]); size > maxIssuesBytes {
				issues, truncated = issues[:i], true
				break
			}
		}
	}
	return catalogError(codeValidationError, validationMessage,
		validationDetails{Issues: issues, Truncated: truncated})
}

// boundIssue cuts an oversized message, path segment or path; it copies
// the path before changing it (it may be the schema's).
func boundIssue(is *ValidationIssue) {
	is.Message = cutText(is.Message, maxMessageBytes)
	long := len(is.Path) > maxPathDepth
	for _, seg := range is.Path {
		long = long || len(seg) > maxSegmentBytes
	}
	if !long {
		return
	}
	p := is.Path
	if len(p) > maxPathDepth {
		p = append(p[:maxPathDepth-1:maxPathDepth-1], "…")
	} else {
		p = slices.Clone(p)
	}
	for i, seg := range p {
		p[i] = cutText(seg, maxSegmentBytes)
	}
	is.Path = p
}

// cutText shortens s to at most max bytes plus "…", on a character
// boundary.
func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// issueSize bounds the encoded size of an issue from above: every byte
// that JSON may escape counts as a six-byte \u escape.
func issueSize(is *ValidationIssue) int {
	n := len(`{"location":"","path":[],"message":""},`) + jsonSize(is.Location) + jsonSize(is.Message)
	for _, seg := range is.Path {
		n += jsonSize(seg) + 3
	}
	return n
}

// quickIssueSize is issueSize's bound without reading the bytes: at
// least issueSize(is).
func quickIssueSize(is *ValidationIssue) int {
	n := len(`{"location":"","path":[],"message":""},`) + 6*(len(is.Location)+len(is.Message))
	for _, seg := range is.Path {
		n += 6*len(seg) + 3
	}
	return n
}

func jsonSize(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			n += 5
		}
	}
	return n
}

// bodyIssue is the 422 for a body that cannot be decoded at all.
func bodyIssue(path []string, msg string) *Error {
	return NewValidationError([]ValidationIssue{{Location: "body", Path: path, Message: msg}})
}

// JSONBody decodes the request body as JSON into a T, with validate's
// one-pass decoder (StructSchema.Decode), for handlers that do not use a
// route contract. The body must be exactly
// one JSON value (validate.CheckJSON: no trailing data, no duplicate keys,
// valid UTF-8, no number beyond a float64) sent with a JSON Content-Type or none; an empty body,
// malformed JSON or a value of the wrong type gives a 422
// FX_VALIDATION_ERROR at location "body": return that error as is. The
// issues and their messages are the ones a route contract with Body:
// validate.Struct[T]() gives for the same body ("Request body is
// required", "Not valid JSON: ...", every type error with its path, at
// most Config.MaxIssues of them), except that JSONBody decodes an integer
// beyond 2^53 exactly into an int64 field and null into the zero T. Cost: the schema of T (validate.Struct[T]()) is compiled
// at the first call for that T and kept, so a call after it pays a
// look-up; then one pass over the body checks the syntax, decodes
// every value into the T and runs its constraint tags (validate's
// StructSchema.Decode: one allocation for the T, one for all the strings
// of a body up to 4 KiB, one per slice and pointer: 3 on
// BenchmarkJSONBody's order with one item); a body that does not
// fit T is read again for its issues and never decoded whole. The strings of the T never alias the request's memory: a
// handler may keep them.
func JSONBody[T any](c *Ctx) (T, error) {
	var v T
	body := c.rc.Request.Body()
	if isBlank(body) {
		return v, bodyIssue(nil, emptyBodyMessage)
	}
	if !jsonContentType(c) {
		return v, NewValidationError([]ValidationIssue{contentTypeIssue})
	}
	max := c.app.cfg.MaxIssues
	p, issues, err := decodeStruct[T](body, max+1) // the strict grammar checked in the same pass
	switch {
	case err != nil: // always CheckJSON's *validate.JSONError: the body is not one strict JSON value
		return v, NewValidationError([]ValidationIssue{jsonIssue(err)})
	case len(issues) > 0:
		truncated := len(issues) > max
		if truncated {
			issues = issues[:max]
		}
		out := appendIssues(nil, "body", issues)
		sortIssues(out)
		return v, newValidationError(out, truncated)
	}
	return *p, nil
}

// decodeStruct runs validate's StructSchema.Decode, a panic (a custom
// UnmarshalJSON) being a 422: the one issue "Request body could not be
// decoded", or the grammar's error when the body is not strict JSON. Its
// err is always CheckJSON's *validate.JSONError.
func decodeStruct[T any](body []byte, max int) (p *T, issues []validate.Issue, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, issues, err = nil, []validate.Issue{{Path: []string{}, Message: "Request body could not be decoded"}}, nil
			if jerr := validate.CheckJSON(body); jerr != nil {
				// the pass met the unmarshaler before the fault: the fault is the answer
				issues, err = nil, jerr
			}
		}
	}()
	return bodySchema[T]().Decode(body, max)
}

// bodySchemas holds JSONBody's schema of each type (reflect.Type →
// *validate.StructSchema[T]), built at the first request that decodes
// one.
var bodySchemas sync.Map

// bodySchema returns validate.Struct[T](), built once per type: a
// request pays a look-up, never the compilation (allocation free once
// built). A type whose tags do not compile panics as Struct does, each
// time, and is never stored.
func bodySchema[T any]() *validate.StructSchema[T] {
	t := reflect.TypeFor[T]()
	if s, ok := bodySchemas.Load(t); ok {
		return s.(*validate.StructSchema[T])
	}
	s, _ := bodySchemas.LoadOrStore(t, validate.Struct[T]())
	return s.(*validate.StructSchema[T])
}

// contentTypeIssue is the issue for a body sent as something else than JSON.
var contentTypeIssue = ValidationIssue{Location: "body", Path: []string{},
	Message: "Content-Type must be application/json"}

// jsonContentType accepts no Content-Type, application/json and any
// application/*+json, with parameters (charset) ignored.
func jsonContentType(c *Ctx) bool {
	ct := c.rc.Request.Header.ContentType()
	if len(ct) == 0 || string(ct) == "application/json" { // the common case, without the folds below
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
