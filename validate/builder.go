package validate

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
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
	issues []Issue
	path   []string
	query  bool
	err    error
	max    int // stop at this many issues (0: no limit); see limit.go
}

func (st *state) add(msg string) {
	if st.full() {
		return
	}
	st.issues = append(st.issues, Issue{Path: slices.Clone(st.path), Message: msg})
	if st.issues[len(st.issues)-1].Path == nil {
		st.issues[len(st.issues)-1].Path = []string{}
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
		p := append(slices.Clone(st.path), is.Path...)
		if p == nil {
			p = []string{}
		}
		st.issues = append(st.issues, Issue{Path: p, Message: is.Message})
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
	st := &state{query: query, max: max}
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

// fmtNum renders a number as a person writes it: 100, 2.5, 9007199254740992, 1e+300.
func fmtNum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// ---- strings

// StringSchema validates a JSON string. Build it with String.
type StringSchema struct {
	common
	minLen, maxLen int // -1: none
	pattern        *regexp.Regexp
	patternMsg     string
	enum           []string
	checks         []func(string) error
}

// String returns a schema for a required string.
func String() *StringSchema {
	return &StringSchema{common: common{textual: true}, minLen: -1, maxLen: -1}
}

func (s *StringSchema) clone() *StringSchema { c := *s; return &c }

// Optional lets the value be absent (the output then lacks the key).
func (s *StringSchema) Optional() *StringSchema { c := s.clone(); c.optional = true; return c }

// Nullable accepts JSON null (the output holds nil).
func (s *StringSchema) Nullable() *StringSchema { c := s.clone(); c.nullable = true; return c }

// Default makes the value optional and uses v when it is absent.
func (s *StringSchema) Default(v string) *StringSchema {
	c := s.clone()
	c.hasDefault, c.def = true, v
	return c
}

// MinLen requires at least n characters (Unicode code points).
func (s *StringSchema) MinLen(n int) *StringSchema { c := s.clone(); c.minLen = n; return c }

// MaxLen allows at most n characters (Unicode code points).
func (s *StringSchema) MaxLen(n int) *StringSchema { c := s.clone(); c.maxLen = n; return c }

// Pattern requires a match of the regular expression expr (RE2 syntax;
// anchor it with ^ and $ to match the whole value). message, when given,
// replaces the default "Must match the pattern ...". An invalid expr
// panics when the schema is built, as regexp.MustCompile does.
func (s *StringSchema) Pattern(expr string, message ...string) *StringSchema {
	c := s.clone()
	c.pattern = regexp.MustCompile(expr)
	c.patternMsg = "Must match the pattern " + expr
	if len(message) > 0 {
		c.patternMsg = message[0]
	}
	return c
}

// Enum allows only the given values.
func (s *StringSchema) Enum(values ...string) *StringSchema {
	c := s.clone()
	c.enum = slices.Clone(values)
	return c
}

// Check adds a custom check, run when the built-in checks pass; a non-nil
// error fails the value and its text is the issue's message (write it in
// plain English: "Must be a valid SKU").
func (s *StringSchema) Check(fn func(string) error) *StringSchema {
	c := s.clone()
	c.checks = append(slices.Clip(c.checks), fn)
	return c
}

// Validate validates v (nil counts as absent).
func (s *StringSchema) Validate(v any) Result { return validateTop(s, v, false, 0) }

// ValidateLimit is Validate stopping at max issues (see Limited).
func (s *StringSchema) ValidateLimit(v any, max int) Result { return validateTop(s, v, false, max) }

func (s *StringSchema) check(v any, st *state) any {
	str, ok := v.(string)
	if !ok {
		if v == nil && s.nullable {
			return nil
		}
		st.add("Expected a string, got " + kindOf(v))
		return nil
	}
	n := -1
	if s.minLen >= 0 || s.maxLen >= 0 {
		n = utf8.RuneCountInString(str)
	}
	switch {
	case s.minLen >= 0 && n < s.minLen:
		st.add("Must be at least " + plural(s.minLen, "character", "characters") + " long")
		return nil
	case s.maxLen >= 0 && n > s.maxLen:
		st.add("Must be at most " + plural(s.maxLen, "character", "characters") + " long")
		return nil
	}
	if s.enum != nil && !slices.Contains(s.enum, str) {
		st.add("Must be one of: " + quoteList(s.enum))
		return nil
	}
	if s.pattern != nil && !s.pattern.MatchString(str) {
		st.add(s.patternMsg)
		return nil
	}
	for _, fn := range s.checks {
		if err := fn(str); err != nil {
			st.add(err.Error())
			return nil
		}
	}
	return v // the input's own interface value: no new allocation
}

func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

// ---- numbers

// NumberSchema validates a JSON number; Integer also requires a whole
// number. In a Query object a string value is parsed with the JSON number
// grammar (see Query).
type NumberSchema struct {
	common
	integer        bool
	hasMin, hasMax bool
	min, max       float64
	enum           []float64
	checks         []func(float64) error
}

// maxSafeInt is the largest integer a float64 holds exactly (2^53).
const maxSafeInt = 1 << 53

// Number returns a schema for a required number. The output is a float64.
func Number() *NumberSchema { return &NumberSchema{} }

// Integer returns a schema for a required whole number between -2^53 and
// 2^53 (the integers a JSON number carries exactly). The output is a
// float64 with no fractional part; 1e3 and 1.0 are integers.
func Integer() *NumberSchema { return &NumberSchema{integer: true} }

func (s *NumberSchema) clone() *NumberSchema { c := *s; return &c }

// Optional lets the value be absent (the output then lacks the key).
func (s *NumberSchema) Optional() *NumberSchema { c := s.clone(); c.optional = true; return c }

// Nullable accepts JSON null (the output holds nil).
func (s *NumberSchema) Nullable() *NumberSchema { c := s.clone(); c.nullable = true; return c }

// Default makes the value optional and uses v when it is absent.
func (s *NumberSchema) Default(v float64) *NumberSchema {
	c := s.clone()
	c.hasDefault, c.def = true, v
	return c
}

// Min requires a value >= n.
func (s *NumberSchema) Min(n float64) *NumberSchema {
	c := s.clone()
	c.hasMin, c.min = true, n
	return c
}

// Max requires a value <= n.
func (s *NumberSchema) Max(n float64) *NumberSchema {
	c := s.clone()
	c.hasMax, c.max = true, n
	return c
}

// Enum allows only the given values.
func (s *NumberSchema) Enum(values ...float64) *NumberSchema {
	c := s.clone()
	c.enum = slices.Clone(values)
	return c
}

// Check adds a custom check, run when the built-in checks pass; a non-nil
// error's text is the issue's message.
func (s *NumberSchema) Check(fn func(float64) error) *NumberSchema {
	c := s.clone()
	c.checks = append(slices.Clip(c.checks), fn)
	return c
}

// Validate validates v (nil counts as absent).
func (s *NumberSchema) Validate(v any) Result { return validateTop(s, v, false, 0) }

// ValidateLimit is Validate stopping at max issues (see Limited).
func (s *NumberSchema) ValidateLimit(v any, max int) Result { return validateTop(s, v, false, max) }

func (s *NumberSchema) what() string {
	if s.integer {
		return "an integer"
	}
	return "a number"
}

func (s *NumberSchema) check(v any, st *state) any {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case int:
		f = float64(n)
	case int64:
		f = float64(n)
	case json.Number:
		var err error
		if f, err = strconv.ParseFloat(string(n), 64); err != nil {
			st.add("Expected " + s.what() + ", got " + quoteInput(string(n)))
			return nil
		}
	case string:
		if !st.query {
			st.add("Expected " + s.what() + ", got a string")
			return nil
		}
		var ok bool
		if f, ok = parseQueryNumber(n); !ok {
			st.add("Expected " + s.what() + ", got " + quoteInput(n))
			return nil
		}
	case nil:
		if s.nullable {
			return nil
		}
		st.add("Expected " + s.what() + ", got null")
		return nil
	default:
		st.add("Expected " + s.what() + ", got " + kindOf(v))
		return nil
	}
	if s.integer && (f != math.Trunc(f) || math.Abs(f) > maxSafeInt) {
		if f != math.Trunc(f) {
			st.add("Expected an integer, got " + fmtNum(f))
		} else {
			st.add("Must be between -2^53 and 2^53")
		}
		return nil
	}
	switch {
	case s.hasMin && f < s.min:
		st.add("Must be at least " + fmtNum(s.min))
		return nil
	case s.hasMax && f > s.max:
		st.add("Must be at most " + fmtNum(s.max))
		return nil
	}
	if s.enum != nil && !slices.Contains(s.enum, f) {
		q := make([]string, len(s.enum))
		for i, e := range s.enum {
			q[i] = fmtNum(e)
		}
		st.add("Must be one of: " + strings.Join(q, ", "))
		return nil
	}
	for _, fn := range s.checks {
		if err := fn(f); err != nil {
			st.add(err.Error())
			return nil
		}
	}
	if _, ok := v.(float64); ok {
		return v // the input's own interface value: no new allocation
	}
	return f
}

// parseQueryNumber accepts exactly the JSON number grammar: "-1", "2.5",
// "1e3"; not " 5", "+5", "05", "0x10", ".5", "NaN", "Inf", or a number too
// large for a float64.
func parseQueryNumber(s string) (float64, bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// ---- booleans

// BooleanSchema validates true or false. In a Query object the strings
// "true" and "false" (exactly, lower case) are accepted.
type BooleanSchema struct {
	common
}

// Boolean returns a schema for a required boolean.
func Boolean() *BooleanSchema { return &BooleanSchema{} }

func (s *BooleanSchema) clone() *BooleanSchema { c := *s; return &c }

// Optional lets the value be absent (the output then lacks the key).
func (s *BooleanSchema) Optional() *BooleanSchema { c := s.clone(); c.optional = true; return c }

// Nullable accepts JSON null (the output holds nil).
func (s *BooleanSchema) Nullable() *BooleanSchema { c := s.clone(); c.nullable = true; return c }

// Default makes the value optional and uses v when it is absent.
func (s *BooleanSchema) Default(v bool) *BooleanSchema {
	c := s.clone()
	c.hasDefault, c.def = true, v
	return c
}

// Validate validates v (nil counts as absent).
func (s *BooleanSchema) Validate(v any) Result { return validateTop(s, v, false, 0) }

// ValidateLimit is Validate stopping at max issues (see Limited).
func (s *BooleanSchema) ValidateLimit(v any, max int) Result { return validateTop(s, v, false, max) }

func (s *BooleanSchema) check(v any, st *state) any {
	switch b := v.(type) {
	case bool:
		return b
	case string:
		if st.query {
			switch b {
			case "true":
				return true
			case "false":
				return false
			}
			st.add("Expected true or false, got " + quoteInput(b))
			return nil
		}
	case nil:
		if s.nullable {
			return nil
		}
	}
	st.add("Expected a boolean, got " + kindOf(v))
	return nil
}

// ---- arrays

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
	case string:
		if !st.query {
			st.add("Expected an array, got a string")
			return nil
		}
		n, at = 1, func(int) any { return a }
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
	switch {
	case s.minItems >= 0 && n < s.minItems:
		st.add("Must have at least " + plural(s.minItems, "item", "items"))
		return nil
	case s.maxItems >= 0 && n > s.maxItems:
		st.add("Must have at most " + plural(s.maxItems, "item", "items"))
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

// ---- objects

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
//   - Boolean accepts exactly "true" and "false".
//   - An empty value (?limit=) is treated as absent for every field that
//     is not a String: the default applies, or "Required" is reported. A
//     String field receives "" (reject it with MinLen(1)).
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
		if st.query && present {
			var rejected bool
			if raw, present, rejected = s.queryValue(fs, raw, st); rejected {
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
		st.add("Unknown key")
		st.pop()
	}
}

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

// queryValue applies the query rules to one present raw value (see
// Query): present is false for an empty value that counts as absent;
// rejected is true when a repeated key was reported.
func (s *ObjectSchema) queryValue(fs Schema, raw any, st *state) (v any, present, rejected bool) {
	_, isArray := fs.(*ArraySchema)
	textual := false
	if c, ok := fs.(checker); ok {
		textual = c.base().textual
	} else {
		return raw, true, false // a foreign schema gets the value as fx gives it
	}
	switch r := raw.(type) {
	case []string:
		if !isArray {
			st.add(fmt.Sprintf("Expected a single value, got %d", len(r)))
			return nil, false, true
		}
	case string:
		if r == "" && !textual {
			return nil, false, false
		}
	}
	return raw, true, false
}

func hasUnknown(m map[string]any, f Fields) bool {
	for k := range m {
		if _, ok := f[k]; !ok {
			return true
		}
	}
	return false
}
