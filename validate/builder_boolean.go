package validate

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
			return queryBool(b, st)
		}
	case nil:
		if s.nullable {
			return nil
		}
	}
	st.add("Expected a boolean, got " + kindOf(v))
	return nil
}

// queryBool is a query string as a boolean: only "true" and "false" are
// one; anything else is an issue (and nil).
func queryBool(s string, st *state) any {
	switch s {
	case "true":
		return true
	case "false":
		return false
	}
	st.add("Expected true or false, got " + quoteInput(s))
	return nil
}
