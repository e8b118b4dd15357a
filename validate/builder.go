package validate

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The built-in schema builder. Every builder method returns a new schema
// (schemas are immutable values, safe to share between routes and
// goroutines). Validation reports every failure with its full path, in
// plain English that names JSON kinds ("a string", "an integer"), never Go
// types. Cost: validating allocates only the output containers (one map
// per object, one slice per array), the boxed numbers of coerced query
// values, and the issues of a failure.

// Fields maps the keys of an object to their schemas. A field's schema may
// be any Schema: a foreign one receives the field's value (nil when the
// key is absent) and its issues are prefixed with the field's path.
type Fields map[string]Schema

// checker is implemented by the built-in schemas.
type checker interface {
	Schema
	base() *common
	check(v any, st *state) any
}

// common holds what every built-in schema has.
type common struct {
	optional, nullable, hasDefault bool
	def                            any
	textual                        bool // a string schema: an empty query value is a value, not absence
}

func (c *common) base() *common { return c }

// state carries the issues and the current path through one validation.
type state struct {
	issueList // stops at max issues (0: no limit)
	path      []string
	query     bool
	err       error
}

// newState starts a validation stopping at max issues.
func newState(query bool, max int) *state {
	return &state{issueList: issueList{max: max}, query: query}
}

// add reports msg at the current path.
func (st *state) add(msg string) {
	if !st.full() {
		st.report(slices.Clone(st.path), msg)
	}
}

func (st *state) push(seg string) { st.path = append(st.path, seg) }
func (st *state) pop()            { st.path = st.path[:len(st.path)-1] }

// run validates a present value with any schema.
func run(s Schema, v any, st *state) any {
	if c, ok := s.(checker); ok {
		return c.check(v, st)
	}
	if st.full() {
		return nil
	}
	res := ValidateMax(s, v, st.room())
	if err := res.Err(); err != nil {
		if st.err == nil {
			st.err = err
		}
		return nil
	}
	for _, is := range res.Issues {
		st.issues = append(st.issues, Issue{Path: nonNil(append(slices.Clone(st.path), is.Path...)), Message: is.Message})
	}
	if res.Value == nil {
		return v
	}
	return res.Value
}

// missing handles an absent value: the default, nothing, or "Required".
func missing(c *common, st *state) (any, bool) {
	switch {
	case c.hasDefault:
		if a, ok := c.def.([]any); ok {
			return slices.Clone(a), true // each value its own: the handler may modify it
		}
		return c.def, true
	case c.optional:
		return nil, false
	}
	st.add("Required")
	return nil, false
}

// validateTop is Validate for every built-in schema: nil is absence; max
// is the issue limit (0: none).
func validateTop(c checker, v any, query bool, max int) Result {
	st := newState(query, max)
	var out any
	if v == nil {
		out, _ = missing(c.base(), st)
	} else {
		out = c.check(v, st)
	}
	if st.err != nil {
		return Fail(st.err)
	}
	if len(st.issues) > 0 {
		return Result{Issues: st.issues}
	}
	return Result{Value: out}
}

// kindOf names the JSON kind of a value, for messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, float32, int, int64, int32, uint, uint64, uint32, json.Number:
		return "a number"
	case []any, []string:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a value of another kind"
}

// quoteInput quotes a client-supplied value for a message, shortened.
func quoteInput(s string) string {
	if len(s) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(s)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// rangeIssue words why a number f is outside [lo, hi] ("" when it is
// inside): "Must be at least lo" below, "Must be at most hi" above, the
// bound it crossed as the document gives it (minimum, maximum) and as a
// min or max tag words it. Every integer range (a Go integer type's, an
// Integer schema's ±2^53, a Min or Max) is worded here.
func rangeIssue(f, lo, hi float64) string {
	switch {
	case f < lo:
		return "Must be at least " + fmtNum(lo)
	case f > hi:
		return "Must be at most " + fmtNum(hi)
	}
	return ""
}

// fmtNum renders a number as a person writes it: 100, 2.5, 9007199254740992, 1e+300.
func fmtNum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
