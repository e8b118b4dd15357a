package validate

import (
	"slices"
	"strings"
)

// ObjectSchema validates a JSON object with known keys. Keys not in its
// Fields are dropped from the output, or each reported as "Unknown key"
// when the object is Strict.
type ObjectSchema struct {
	common
	fields Fields
	keys   []string // sorted
	strict bool
	query  bool
	checks []func(map[string]any) error
}

// Object returns a schema for a required object with the given fields.
// The output is a new map[string]any holding the outputs of the declared
// fields (defaults filled in).
func Object(fields Fields) *ObjectSchema {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return &ObjectSchema{fields: fields, keys: keys}
}

// Query returns the object schema for a route's query string: fx hands it
// a map of string (or []string for a repeated key), and its fields coerce
// those strings, which the same fields in a body never do:
//
//   - Number and Integer parse the JSON number grammar ("5", "-2.5",
//     "1e3"); " 5", "+5", "05", "0x10", "NaN", "Inf" and "" are not numbers.
//   - Boolean reads a string with ParseBool: "1", "t", "T", "TRUE",
//     "true", "True" and "0", "f", "F", "FALSE", "false", "False".
//   - An empty value (?limit=) is treated as absent for every field that
//     is not a String: the default applies, or "Required" is reported. A
//     String field receives "" (reject it with MinLen(1)); a value that
//     is not valid UTF-8 is refused ("Expected a string, got invalid
//     UTF-8").
//   - A repeated key (?a=1&a=2) is an Array field's elements; for any other
//     field it is the issue "Expected a single value, got 2".
func Query(fields Fields) *ObjectSchema {
	o := Object(fields)
	o.query = true
	return o
}

func (s *ObjectSchema) clone() *ObjectSchema { c := *s; return &c }

// Optional lets the value be absent (the output then lacks the key).
func (s *ObjectSchema) Optional() *ObjectSchema { c := s.clone(); c.optional = true; return c }

// Nullable accepts JSON null (the output holds nil).
func (s *ObjectSchema) Nullable() *ObjectSchema { c := s.clone(); c.nullable = true; return c }

// Strict reports every key that is not in Fields, each as its own issue
// "Unknown key" at that key's path.
func (s *ObjectSchema) Strict() *ObjectSchema { c := s.clone(); c.strict = true; return c }

// Check adds a custom check on the whole object (cross-field rules), run
// when every field is valid, with the output map; a non-nil error's text is
// the issue's message, reported at the object's path. Return a
// *FieldError to report it at one field instead.
func (s *ObjectSchema) Check(fn func(map[string]any) error) *ObjectSchema {
	c := s.clone()
	c.checks = append(slices.Clip(c.checks), fn)
	return c
}

// FieldError is an error a custom Object check returns to report its
// issue at one field of the object (Field is a key, or a path below the
// object).
type FieldError struct {
	Field   []string
	Message string
}

// Error returns Message.
func (e *FieldError) Error() string { return e.Message }

// Validate validates v (nil counts as absent).
func (s *ObjectSchema) Validate(v any) Result { return validateTop(s, v, s.query, 0) }

// ValidateLimit is Validate stopping at max issues (see Limited): the
// fields are checked in sorted key order, then a Strict object's unknown
// keys in sorted order, and the work ends at the max-th issue.
func (s *ObjectSchema) ValidateLimit(v any, max int) Result {
	return validateTop(s, v, s.query, max)
}

func (s *ObjectSchema) check(v any, st *state) any {
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil && s.nullable {
			return nil
		}
		st.add("Expected an object, got " + kindOf(v))
		return nil
	}
	if s.query {
		st.query = true
	}
	before := len(st.issues)
	out := make(map[string]any, len(s.fields))
	for _, k := range s.keys {
		if st.full() {
			break
		}
		fs := s.fields[k]
		raw, present := m[k]
		st.push(k)
		if c, ok := fs.(checker); ok && st.query && present { // a foreign schema gets the value as fx gives it
			_, list := fs.(*ArraySchema)
			var refused bool
			if raw, present, refused = queryValue(raw, list, c.base().textual, st); refused {
				st.pop()
				continue
			}
		}
		if !present {
			absent(k, fs, out, st)
		} else {
			out[k] = run(fs, raw, st)
		}
		st.pop()
	}
	if s.strict && !st.full() && hasUnknown(m, s.fields) {
		s.reportUnknown(func(yield func(string) bool) {
			for k := range m {
				if _, ok := s.fields[k]; !ok && !yield(k) {
					return
				}
			}
		}, st)
	}
	return s.finish(out, before, st)
}

// absent handles a declared field whose key is not in the object: its
// default, nothing, or "Required" (a foreign schema receives nil).
func absent(k string, fs Schema, out map[string]any, st *state) {
	if c, ok := fs.(checker); ok {
		if val, keep := missing(c.base(), st); keep {
			out[k] = val
		}
	} else if val := run(fs, nil, st); val != nil {
		out[k] = val
	}
}

// reportUnknown reports "Unknown key" for the smallest unknown keys (all
// of them, or as many as the issue limit leaves room for), sorted.
func (s *ObjectSchema) reportUnknown(each func(yield func(string) bool), st *state) {
	for _, k := range smallestKeys(each, st.room()) {
		st.push(strings.Clone(k)) // k may alias the request body (stream path)
		st.add(unknownKey)
		st.pop()
	}
}

// unknownKey is the message of a key an object refuses: a Strict
// object's, a closed struct's (see closedStruct).
const unknownKey = "Unknown key"

// finish runs the object's own checks once its fields are valid.
func (s *ObjectSchema) finish(out map[string]any, before int, st *state) any {
	if len(st.issues) > before {
		return nil
	}
	for _, fn := range s.checks {
		if err := fn(out); err != nil {
			if fe, ok := err.(*FieldError); ok {
				n := len(st.path)
				st.path = append(st.path, fe.Field...)
				st.add(fe.Message)
				st.path = st.path[:n]
			} else {
				st.add(err.Error())
			}
			return nil
		}
	}
	return out
}

func hasUnknown(m map[string]any, f Fields) bool {
	for k := range m {
		if _, ok := f[k]; !ok {
			return true
		}
	}
	return false
}
