package fx

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fxhq/fx/validate"
)

// Route contracts: the body and the query of a request are validated
// against the route's schemas before its handler runs.
//
//   - Both are always validated (a bad body does not hide a bad query);
//     every issue of both goes into one 422 FX_VALIDATION_ERROR, ordered by
//     location ("body" before "query"), then path (segment by segment;
//     array indices compare as numbers, so "2" comes before "10").
//   - Body: an empty body is validated as nil (an Optional schema accepts
//     it; otherwise the issue at the root reads "Request body is
//     required"). A non-empty body must have a JSON Content-Type (or none)
//     and be exactly one JSON value without duplicate keys; anything else is
//     one issue at location "body" (see validate.CheckJSON). A schema that
//     implements validate.Decoder receives the raw bytes; any other schema
//     receives the validate.DecodeJSON tree. The wire result is the same.
//     A validate.GrammarChecker answers a malformed body itself, so the
//     body is checked once, by the schema's own pass.
//   - Query: a map[string]any of the decoded values, string or []string
//     for a repeated key (see validate.Query for how the built-in schema
//     reads them).
//   - A schema that panics or returns validate.Fail is a 500
//     FX_INTERNAL_ERROR (logged), never a 422.
//   - Bounded (no error response grows past about 64 KiB): at most Config.MaxIssues issues, body and
//     query together. Each schema is asked for one more issue than there
//     is room for (validate.ValidateMax: a validate.Limited schema stops
//     working there, any other has its list cut); getting it means the
//     list is truncated, and the 422 says so with details.truncated. The
//     query is not validated at all when the body alone filled the list.
//
// The handler reads the validated values with ValidBody and ValidQuery:
// no second decode.
//
// Cost: with validate.Struct a valid body costs one pass over the bytes
// (grammar, types and the decode into the struct together); the
// builder's Object and Array check the grammar, then walk the bytes and
// allocate the values they check and their output; a schema that is not
// a validate.GrammarChecker costs one more scan of the body (CheckJSON)
// before its own; the query map costs one map plus a string per value.

// emptyBodyMessage replaces, for an empty body, the issues a schema reports
// at the root (one issue, however many), so that every schema library says
// the same.
const emptyBodyMessage = "Request body is required"

func contractHandler(bodySchema, querySchema validate.Schema, h Handler) Handler {
	body := bodyReader{s: bodySchema}
	body.dec, _ = bodySchema.(validate.Decoder)
	if g, ok := bodySchema.(validate.GrammarChecker); ok {
		body.checked = g.ChecksGrammar()
	}
	return func(c *Ctx) error {
		max := c.app.cfg.MaxIssues
		var issues []ValidationIssue
		truncated := false
		if bodySchema != nil {
			v, bodyIssues, err := c.validateBody(&body, max+1)
			if err != nil {
				return err
			}
			issues = bodyIssues
			if len(issues) > max {
				issues, truncated = issues[:max], true
			}
			c.body = v
		}
		if querySchema != nil && !truncated {
			q := queryMap(c)
			room := max - len(issues)
			res, err := runSchema("query", querySchema, q, room+1)
			if err != nil {
				return err
			}
			qi := res.Issues
			if len(qi) > room {
				qi, truncated = qi[:room], true
			}
			issues = appendIssues(issues, "query", qi)
			c.query = outputOf(res, q)
		}
		if len(issues) > 0 || truncated {
			sortIssues(issues)
			return newValidationError(issues, truncated)
		}
		return h(c)
	}
}

// bodyReader is how a route reads its body, decided once when the route
// is registered: the schema, its Decoder form (nil: the tree path), and
// whether that Decoder checks the grammar itself.
type bodyReader struct {
	s       validate.Schema
	dec     validate.Decoder
	checked bool // dec is a GrammarChecker that checks: no CheckJSON here
}

// validateBody validates the request body, asking the schema for at most
// limit issues.
func (c *Ctx) validateBody(b *bodyReader, limit int) (any, []ValidationIssue, error) {
	s, dec := b.s, b.dec
	raw := c.rc.Request.Body()
	if isBlank(raw) {
		res, err := runSchema("body", s, nil, limit)
		if err != nil {
			return nil, nil, err
		}
		issues := appendIssues(nil, "body", res.Issues)
		out, root := issues[:0], false
		for _, is := range issues {
			if len(is.Path) == 0 {
				if root {
					continue // one "Request body is required", however many root issues
				}
				root, is.Message = true, emptyBodyMessage
			}
			out = append(out, is)
		}
		return res.Value, out, nil
	}
	if !jsonContentType(c) {
		return nil, []ValidationIssue{contentTypeIssue}, nil
	}
	if dec != nil {
		if !b.checked {
			if err := validate.CheckJSON(raw); err != nil {
				return nil, []ValidationIssue{jsonIssue(err)}, nil
			}
		}
		res, err := runDecoder(dec, raw, limit)
		if err != nil {
			return nil, nil, err
		}
		return res.Value, appendIssues(nil, "body", res.Issues), nil
	}
	tree, err := validate.DecodeJSON(raw)
	if err != nil {
		return nil, []ValidationIssue{jsonIssue(err)}, nil
	}
	res, err := runSchema("body", s, tree, limit)
	if err != nil {
		return nil, nil, err
	}
	return outputOf(res, tree), appendIssues(nil, "body", res.Issues), nil
}

// outputOf is the value the handler gets: the schema's output, or the
// input itself for a schema that validates without producing a value.
func outputOf(res validate.Result, in any) any {
	if res.Value == nil && len(res.Issues) == 0 {
		return in
	}
	return res.Value
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// jsonIssue turns a CheckJSON / DecodeJSON error into the body issue.
func jsonIssue(err error) ValidationIssue {
	var je *validate.JSONError
	if errors.As(err, &je) {
		is := je.Issue()
		return ValidationIssue{Location: "body", Path: is.Path, Message: is.Message}
	}
	return ValidationIssue{Location: "body", Path: []string{}, Message: "Request body is not valid JSON"}
}

func nonNilPath(p []string) []string {
	if p == nil {
		return []string{}
	}
	return p
}

// runSchema calls Validate (ValidateLimit when the schema has it; at most
// max issues). A panic, or a Result built by validate.Fail, is an internal
// failure (500), not a validation failure.
func runSchema(location string, s validate.Schema, v any, max int) (res validate.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("fx: %s schema %T panicked: %s", location, s, formatValue(r))
		}
	}()
	res = validate.ValidateMax(s, v, max)
	if ferr := res.Err(); ferr != nil {
		return res, fmt.Errorf("fx: %s schema %T failed: %w", location, s, ferr)
	}
	return res, nil
}

func runDecoder(d validate.Decoder, body []byte, max int) (res validate.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("fx: body schema %T panicked: %s", d, formatValue(r))
		}
	}()
	res = validate.ValidateJSONMax(d, body, max)
	if ferr := res.Err(); ferr != nil {
		return res, fmt.Errorf("fx: body schema %T failed: %w", d, ferr)
	}
	return res, nil
}

func appendIssues(dst []ValidationIssue, location string, issues []validate.Issue) []ValidationIssue {
	dst = slices.Grow(dst, len(issues))
	for _, is := range issues {
		dst = append(dst, ValidationIssue{Location: location, Path: nonNilPath(is.Path), Message: is.Message})
	}
	return dst
}

// sortIssues orders issues by location (body before query), then path,
// keeping the order of equal ones. A short list (every failed request's)
// is sorted by insertion, comparing in place; a longer one by
// slices.SortStableFunc.
func sortIssues(issues []ValidationIssue) {
	if len(issues) > 12 {
		slices.SortStableFunc(issues, func(a, b ValidationIssue) int { return compareIssues(&a, &b) })
		return
	}
	for i := 1; i < len(issues); i++ {
		for j := i; j > 0 && compareIssues(&issues[j-1], &issues[j]) > 0; j-- {
			issues[j-1], issues[j] = issues[j], issues[j-1]
		}
	}
}

// compareIssues is sortIssues' order.
func compareIssues(a, b *ValidationIssue) int {
	if a.Location != b.Location {
		if a.Location == "body" {
			return -1
		}
		if b.Location == "body" {
			return 1
		}
		if a.Location < b.Location {
			return -1
		}
		return 1
	}
	return comparePaths(a.Path, b.Path)
}

// comparePaths compares segment by segment; two segments that are both
// non-negative integers compare as numbers ("2" < "10"); a prefix comes
// first.
func comparePaths(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		if isDigits(a[i]) && isDigits(b[i]) {
			// Array indices compare as numbers ("2" < "10") without
			// parsing: strip leading zeros, then shorter is smaller.
			x, y := trimZeros(a[i]), trimZeros(b[i])
			if len(x) != len(y) {
				return len(x) - len(y)
			}
			if x != y {
				return strings.Compare(x, y)
			}
		}
		if a[i] < b[i] {
			return -1
		}
		return 1
	}
	return len(a) - len(b)
}

// trimZeros is s without its leading '0's.
func trimZeros(s string) string {
	for len(s) > 0 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// queryMap builds the value a Query schema receives: string values, or
// []string for a repeated key, percent-decoded.
func queryMap(c *Ctx) map[string]any {
	args := c.rc.QueryArgs()
	m := make(map[string]any, args.Len())
	for k, v := range args.All() {
		key, val := string(k), string(v)
		switch prev := m[key].(type) {
		case nil:
			m[key] = val
		case string:
			m[key] = []string{prev, val}
		case []string:
			m[key] = append(prev, val)
		}
	}
	return m
}

// ValidBody returns the body validated by the route contract as a T, with
// no second decode. T is the type the schema produces: for
// validate.Struct[X] use X (or *X); for the builder's Object,
// map[string]any. ok is false when the route has no Body schema, the body
// was empty and optional, or the value is of another type. It costs a type
// assertion and, for X, a copy of the struct.
func ValidBody[T any](c *Ctx) (v T, ok bool) {
	return typed[T](c.body)
}

// ValidQuery is ValidBody for the query: for validate.QueryStruct[X] use
// X (or *X); for validate.Query, map[string]any.
func ValidQuery[T any](c *Ctx) (v T, ok bool) {
	return typed[T](c.query)
}

func typed[T any](x any) (T, bool) {
	switch v := x.(type) {
	case T:
		return v, true
	case *T:
		if v != nil {
			return *v, true
		}
	}
	var zero T
	return zero, false
}
