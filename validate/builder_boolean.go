package validate

// BooleanSchema validates true or false. In a Query object a string is
// read by ParseBool (1, t, T, TRUE, true, True; 0, f, F, FALSE, false,
// False).
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
