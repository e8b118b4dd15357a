package validate

import (
	"math"
	"slices"
)

// JSON Schema forms of the built-in builder's schemas (see Describer).
// Every constraint the builder checks maps to a 2020-12 keyword: MinLen →
// minLength, Pattern → pattern (RE2 syntax, which for common expressions
// reads the same as ECMA-262's), Enum → enum, Min/Max → minimum/maximum,
// Integer → type integer within ±2^53, MinItems/MaxItems, Object fields →
// properties and required (neither Optional nor with a Default), Strict →
// additionalProperties false, Nullable → a "null" type, Default → default.
// Check functions have no JSON Schema form and are not described.

// describe adds what every built-in schema has to m, whose type is kind.
func (c *common) describe(m map[string]any, kind string) map[string]any {
	if c.nullable {
		m["type"] = []any{kind, "null"}
	} else {
		m["type"] = kind
	}
	if c.hasDefault {
		m["default"] = c.def
		if a, ok := c.def.([]any); ok {
			m["default"] = slices.Clone(a) // the caller may modify the map
		}
	}
	return m
}

// required reports whether an object field must be present.
func (c *common) required() bool { return !c.optional && !c.hasDefault }

// JSONSchema describes the string schema (see Describer).
func (s *StringSchema) JSONSchema() map[string]any {
	m := map[string]any{}
	if s.minLen >= 0 {
		m["minLength"] = s.minLen
	}
	if s.maxLen >= 0 {
		m["maxLength"] = s.maxLen
	}
	if s.pattern != nil {
		m["pattern"] = s.pattern.String()
	}
	if s.format != "" {
		m["format"] = string(s.format)
	}
	if s.enum != nil {
		e := make([]any, len(s.enum))
		for i, v := range s.enum {
			e[i] = v
		}
		m["enum"] = e
	}
	return s.describe(m, "string")
}

// JSONSchema describes the number schema (see Describer).
func (s *NumberSchema) JSONSchema() map[string]any {
	m := map[string]any{}
	kind := "number"
	if s.integer {
		kind = "integer"
	}
	lo, hi := s.bounds()
	if !math.IsInf(lo, 0) {
		m["minimum"] = lo
	}
	if !math.IsInf(hi, 0) {
		m["maximum"] = hi
	}
	if s.enum != nil {
		e := make([]any, len(s.enum))
		for i, v := range s.enum {
			e[i] = v
		}
		m["enum"] = e
	}
	return s.describe(m, kind)
}

// JSONSchema describes the boolean schema (see Describer).
func (s *BooleanSchema) JSONSchema() map[string]any {
	return s.describe(map[string]any{}, "boolean")
}

// JSONSchema describes the array schema (see Describer).
func (s *ArraySchema) JSONSchema() map[string]any {
	m := map[string]any{"items": schemaOrAny(s.elem)}
	if s.minItems >= 0 {
		m["minItems"] = s.minItems
	}
	if s.maxItems >= 0 {
		m["maxItems"] = s.maxItems
	}
	return s.describe(m, "array")
}

// JSONSchema describes the object schema (see Describer). For a Query
// object it is the object of the query's parameters: each property one
// parameter, required ones listed in required.
func (s *ObjectSchema) JSONSchema() map[string]any {
	props := make(map[string]any, len(s.keys))
	var req []any
	for _, k := range s.keys {
		fs := s.fields[k]
		props[k] = schemaOrAny(fs)
		if c, ok := fs.(checker); ok && c.base().required() {
			req = append(req, k)
		}
	}
	m := map[string]any{"properties": props}
	if req != nil {
		m["required"] = req
	}
	if s.strict {
		m["additionalProperties"] = false
	}
	return s.describe(m, "object")
}

// schemaOrAny is the JSON Schema of s, or {} (any value) when s does not
// describe itself.
func schemaOrAny(s Schema) map[string]any {
	if m, ok := JSONSchemaOf(s); ok {
		return m
	}
	return map[string]any{}
}
