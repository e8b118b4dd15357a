package validate

import (
	"slices"
	"strconv"
)

// ArraySchema validates a JSON array whose elements all match one schema.
// In a Query object it takes the values of a repeated key (?tag=a&tag=b),
// or a single value as an array of one.
type ArraySchema struct {
	common
	elem               Schema
	minItems, maxItems int
	checks             []func([]any) error
}

// Array returns a schema for a required array of elements matching elem.
// The output is a []any of the elements' outputs.
func Array(elem Schema) *ArraySchema { return &ArraySchema{elem: elem, minItems: -1, maxItems: -1} }

func (s *ArraySchema) clone() *ArraySchema { c := *s; return &c }

// Optional lets the value be absent (the output then lacks the key).
func (s *ArraySchema) Optional() *ArraySchema { c := s.clone(); c.optional = true; return c }

// Nullable accepts JSON null (the output holds nil).
func (s *ArraySchema) Nullable() *ArraySchema { c := s.clone(); c.nullable = true; return c }

// Default makes the value optional and uses v when it is absent.
func (s *ArraySchema) Default(v []any) *ArraySchema {
	c := s.clone()
	c.hasDefault, c.def = true, slices.Clone(v)
	return c
}

// MinItems requires at least n elements.
func (s *ArraySchema) MinItems(n int) *ArraySchema { c := s.clone(); c.minItems = n; return c }

// MaxItems allows at most n elements.
func (s *ArraySchema) MaxItems(n int) *ArraySchema { c := s.clone(); c.maxItems = n; return c }

// Check adds a custom check on the whole array, run when the elements are
// valid; a non-nil error's text is the issue's message.
func (s *ArraySchema) Check(fn func([]any) error) *ArraySchema {
	c := s.clone()
	c.checks = append(slices.Clip(c.checks), fn)
	return c
}

// Validate validates v (nil counts as absent).
func (s *ArraySchema) Validate(v any) Result { return validateTop(s, v, false, 0) }

// ValidateLimit is Validate stopping at max issues (see Limited).
func (s *ArraySchema) ValidateLimit(v any, max int) Result { return validateTop(s, v, false, max) }

func (s *ArraySchema) check(v any, st *state) any {
	var n int
	var at func(i int) any
	switch a := v.(type) {
	case []any:
		n, at = len(a), func(i int) any { return a[i] }
	case []string:
		n, at = len(a), func(i int) any { return a[i] }
	case nil:
		if s.nullable {
			return nil
		}
		st.add("Expected an array, got null")
		return nil
	default:
		st.add("Expected an array, got " + kindOf(v))
		return nil
	}
	if !s.sizeFits(n, st) {
		return nil
	}
	before := len(st.issues)
	// out grows with the valid prefix only: once an element fails, the
	// output is discarded anyway (4 MiB of "{}" elements made a 22 MB
	// slice here before the first element was looked at).
	var out []any
	for i := range n {
		if st.full() {
			break
		}
		st.push(strconv.Itoa(i))
		e := run(s.elem, at(i), st)
		st.pop()
		if len(st.issues) == before {
			if out == nil {
				out = make([]any, 0, n)
			}
			out = append(out, e)
		}
	}
	return s.finish(out, before, st)
}

// sizeFits reports whether an array of n elements keeps MinItems and
// MaxItems, adding the issue when not.
func (s *ArraySchema) sizeFits(n int, st *state) bool {
	switch {
	case s.minItems >= 0 && n < s.minItems:
		st.add("Must have at least " + plural(s.minItems, "item", "items"))
		return false
	case s.maxItems >= 0 && n > s.maxItems:
		st.add("Must have at most " + plural(s.maxItems, "item", "items"))
		return false
	}
	return true
}

// finish ends a check of the elements (over the tree or the bytes): out
// holds the valid ones, before the issue count when they started; the
// array's own checks run only when every element passed.
func (s *ArraySchema) finish(out []any, before int, st *state) any {
	if len(st.issues) > before {
		return nil
	}
	if out == nil {
		out = []any{}
	}
	for _, fn := range s.checks {
		if err := fn(out); err != nil {
			st.add(err.Error())
			return nil
		}
	}
	return out
}
