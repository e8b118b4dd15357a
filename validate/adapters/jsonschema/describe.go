package jsonschema

import "encoding/json"

// JSONSchema returns the schema document Compile was given, verbatim (a
// new copy each call), so that documentation generators (package openapi)
// show exactly the schema requests are validated against
// (validate.Describer). A schema wrapped with New has no source document
// here: it is described as {} (any value). A document that is a boolean
// schema is described as {} for true and {"not": {}} for false.
func (s *Schema) JSONSchema() map[string]any {
	var doc any
	if s.src == "" || json.Unmarshal([]byte(s.src), &doc) != nil {
		return map[string]any{}
	}
	switch d := doc.(type) {
	case map[string]any:
		return d
	case bool:
		if !d {
			return map[string]any{"not": map[string]any{}}
		}
	}
	return map[string]any{}
}
