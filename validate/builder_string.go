package validate

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// StringSchema validates a JSON string. Build it with String.
type StringSchema struct {
	common
	minLen, maxLen int // -1: none
	pattern        *regexp.Regexp
	patternMsg     string
	enum           []string
	format         Format
	formatOK       func(string) bool
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

// Format requires the value to be in format f (FormatEmail, FormatUUID,
// FormatURI, FormatIPv4, FormatIPv6, FormatHostname, FormatDateTime): the
// same check as the constraint tag of that name, and the JSON Schema
// "format" keyword. An unknown format panics when the schema is built.
// Cost: none allocates but FormatURI.
func (s *StringSchema) Format(f Format) *StringSchema {
	ok := formatCheck(f)
	if ok == nil {
		panic("validate: unknown string format " + strconv.Quote(string(f)))
	}
	c := s.clone()
	c.format, c.formatOK = f, ok
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
	if st.query {
		if issue := textIssue(str); issue != "" { // what a raw string means: scalar's reading
			st.add(issue)
			return nil
		}
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
	if s.formatOK != nil && !s.formatOK(str) {
		st.add(formatMessage(s.format))
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
