package validate

import "math"

// JSONSchema describes T as Struct reads it (see TypeJSONSchema). For a
// QueryStruct it is the object of the query's parameters.
func (s *StructSchema[T]) JSONSchema() map[string]any {
	return typeSchema(s.d, map[*tdesc]bool{})
}

// typeSchema is TypeJSONSchema over a description; open holds the
// descriptions being described (a repetition is any value).
func typeSchema(d *tdesc, open map[*tdesc]bool) map[string]any {
	if open[d] {
		return map[string]any{}
	}
	open[d] = true
	defer delete(open, d)
	switch d.kind {
	case tString, tText:
		return map[string]any{"type": "string"}
	case tTime:
		return map[string]any{"type": "string", "format": "date-time"}
	case tBytes:
		return map[string]any{"type": []any{"string", "null"}, "contentEncoding": "base64"}
	case tBool:
		return map[string]any{"type": "boolean"}
	case tInt:
		lo, hi := -float64(maxSafeInt), float64(maxSafeInt)
		if d.bits < 64 {
			lo, hi = -math.Ldexp(1, d.bits-1), math.Ldexp(1, d.bits-1)-1
		}
		return map[string]any{"type": "integer", "minimum": lo, "maximum": hi}
	case tUint:
		hi := float64(maxSafeInt)
		if d.bits < 64 {
			hi = math.Ldexp(1, d.bits) - 1
		}
		return map[string]any{"type": "integer", "minimum": 0, "maximum": hi}
	case tFloat:
		return map[string]any{"type": "number"}
	case tSlice:
		return map[string]any{"type": []any{"array", "null"}, "items": typeSchema(d.elem, open)}
	case tMap:
		return map[string]any{"type": []any{"object", "null"}, "additionalProperties": typeSchema(d.elem, open)}
	case tStruct:
		props := make(map[string]any, len(d.fields))
		for _, f := range d.fields {
			props[f.name] = typeSchema(f.d, open)
		}
		return map[string]any{"type": "object", "properties": props}
	}
	return map[string]any{}
}
