package validate

import (
	"slices"
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
