package validate

import "reflect"

// Describer is the optional interface of a Schema that can state itself as
// JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1): documentation
// generators (package openapi) use it, fx never calls it while serving.
// The built-in schemas, Struct and QueryStruct implement it (describe_*.go),
// and so can any other library's schema.
//
// JSONSchema returns a new map each call (the caller may modify it), made
// of JSON values only: map[string]any, []any, string, float64, int, bool,
// nil. It describes the values the schema accepts as far as JSON Schema
// can: custom Check functions have no JSON Schema form and are left out.
type Describer interface {
	JSONSchema() map[string]any
}

// JSONSchemaOf returns the JSON Schema of s when s is a Describer, and ok
// false otherwise (nothing is known about the values it accepts).
func JSONSchemaOf(s Schema) (schema map[string]any, ok bool) {
	if d, isD := s.(Describer); isD {
		return d.JSONSchema(), true
	}
	return nil, false
}

// TypeJSONSchema returns the JSON Schema of the Go type t as Struct reads
// it: its JSON tags name the properties (encoding/json's rules, embedded
// structs flattened), time.Time is a date-time string, []byte a base64
// string, an integer has its format (int32, int64) and its Go type's
// bounds, and a type that decodes itself (json.Unmarshaler) is any value.
// Constraint tags become keywords (docs/tags.md), min/max becoming
// minLength, minimum, minItems, ...,
// doc and example become description and examples. Slices and maps may
// be null (c.JSON encodes a nil one as null); the schemas of request
// values (StructSchema.JSONSchema, and fx.Op's bodies) make them
// nullable only when the field is a pointer or starts with omitempty.
// A recursive type is described down to its first repetition, which is
// any value. It describes response bodies (what c.JSON encodes from t);
// the tags of a type whose tags do not compile are left out. Its required
// lists are a response's: every field c.JSON always
// sends (no omitempty or omitzero, not a pointer). The schemas of request
// values list instead the fields whose absence is refused: those tagged
// required, and those whose zero value (what an absent key leaves) fails
// their rules (validate:"min=1" on an int).
func TypeJSONSchema(t reflect.Type) map[string]any {
	return typeSchema(describe(t), &describer{open: map[*tdesc]bool{}, rules: true})
}
