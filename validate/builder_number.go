package validate

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
)

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

// bounds is the range the schema accepts (±Inf where it has none): Min
// and Max, within ±2^53 for an Integer. The check and the document read
// it.
func (s *NumberSchema) bounds() (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	if s.integer {
		l, h := intRange(tInt, 64)
		lo, hi = float64(l), float64(h)
	}
	if s.hasMin && s.min > lo {
		lo = s.min
	}
	if s.hasMax && s.max < hi {
		hi = s.max
	}
	return lo, hi
}

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
	if s.integer && f != math.Trunc(f) {
		st.add(fractionIssue(f))
		return nil
	}
	// the tightest bound, declared or the ±2^53 of an Integer: worded as a
	// struct field of that range words it (QueryStruct, fx.Op)
	if lo, hi := s.bounds(); f < lo || f > hi {
		st.add(rangeIssue(f, lo, hi))
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
