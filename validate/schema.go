package validate

import (
	"reflect"
	"slices"

	json "github.com/goccy/go-json"
)

// Describer is the optional interface of a Schema that can state itself as
// JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1): documentation
// generators (package openapi) use it, fx never calls it while serving.
// The built-in schemas, Struct and QueryStruct implement it, and so can
// any other library's schema.
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
// doc and example become description and examples. Slices, maps and
// []byte may be null (c.JSON encodes a nil one as null; OutputJSONSchema
// describes a typed operation's output, where they never are), and so
// may a pointer field without omitempty; the schemas of
// request values (StructSchema.JSONSchema, and fx.Op's bodies) take null
// exactly where the checks of a request do: a field or element declared
// as a pointer, a slice, map or []byte field whose validate tag starts
// with omitempty, and a value of any type. Anywhere else a request's
// null is refused like a value of the wrong type ("Expected a string,
// got null"), since it would silently read as the zero value.
// A recursive type is described down to its first repetition, which is
// any value. It describes response bodies (what c.JSON encodes from t);
// the tags of a type whose tags do not compile are left out. Its required
// lists are a response's: every field c.JSON always sends (no omitempty
// or omitzero; a nil pointer is sent as null). The schemas of request
// values list instead the fields whose absence is refused: those tagged
// required, and those whose zero value (what an absent key leaves) fails
// their rules (validate:"min=1" on an int).
func TypeJSONSchema(t reflect.Type) map[string]any {
	return typeSchema(descOf(t), &describer{open: map[*tdesc]bool{}, rules: true})
}

// OutputJSONSchema is TypeJSONSchema for a value encoded with nil
// slices, maps and []byte as [], {} and "" (a typed operation's output:
// fx.Op encodes it so): they are never null, so their types do not list
// null; a pointer is still sent as null when nil, and described as
// TypeJSONSchema describes it.
func OutputJSONSchema(t reflect.Type) map[string]any {
	return typeSchema(descOf(t), &describer{open: map[*tdesc]bool{}, rules: true, emptyNil: true})
}

// JSONSchema describes T as Struct reads it (see TypeJSONSchema): its
// constraint tags included, unless the schema was built with TypesOnly.
// For a QueryStruct it is the object of the query's parameters.
func (s *StructSchema[T]) JSONSchema() map[string]any {
	return typeSchema(s.d, &describer{open: map[*tdesc]bool{}, rules: s.rules, request: true})
}

// describer carries one description: open holds the descriptions being
// described (a repetition is any value); rules says whether constraint
// tags are described; request whether the value is one a request sends
// (a slice or map is then nullable only when a pointer or omitempty says
// so) or one c.JSON encodes (where a nil slice or map is null); emptyNil
// that the value is encoded with nil slices and maps as [] and {}
// (OutputJSONSchema).
type describer struct {
	open                     map[*tdesc]bool
	rules, request, emptyNil bool
}

// collection is the type of a slice or map: nullable in a response that
// c.JSON encodes.
func (ds *describer) collection(kind string) any {
	if ds.request || ds.emptyNil {
		return kind
	}
	return []any{kind, "null"}
}

// member is the schema of a field's or an element's value of type d: in
// a request, null is one of its types exactly when it takes null
// (takesNull), as the type checks read it.
func (ds *describer) member(d *tdesc, null bool) map[string]any {
	m := typeSchema(d, ds)
	if null { // a request's null where it is taken; a response's nil pointer element
		nullable(m)
	}
	return m
}

// nullable adds "null" to the types of schema m, and to its enum (one
// that takes any value, without a type, takes null already).
func nullable(m map[string]any) {
	switch t := m["type"].(type) {
	case string:
		m["type"] = []any{t, "null"}
	case []any:
		if slices.Contains(t, any("null")) {
			return
		}
		m["type"] = append(slices.Clone(t), "null")
	default:
		return
	}
	switch e := m["enum"].(type) {
	case []any:
		m["enum"] = append(slices.Clone(e), nil)
	case []string:
		all := make([]any, 0, len(e)+1)
		for _, x := range e {
			all = append(all, x)
		}
		m["enum"] = append(all, nil)
	}
}

// typeSchema is TypeJSONSchema over a description.
func typeSchema(d *tdesc, ds *describer) map[string]any {
	if ds.open[d] {
		return map[string]any{}
	}
	ds.open[d] = true
	defer delete(ds.open, d)
	switch d.kind {
	case tString, tText:
		return map[string]any{"type": "string"}
	case tTime:
		return map[string]any{"type": "string", "format": "date-time"}
	case tBytes:
		return map[string]any{"type": ds.collection("string"), "contentEncoding": "base64"}
	case tBool:
		return map[string]any{"type": "boolean"}
	case tInt, tUint:
		lo, hi := intRange(d.kind, d.bits)
		return map[string]any{"type": "integer", "format": intFormat(d.bits <= 32 && (d.kind == tInt || d.bits < 32)), "minimum": float64(lo), "maximum": float64(hi)}
	case tFloat:
		return map[string]any{"type": "number"}
	case tSlice:
		return map[string]any{"type": ds.collection("array"), "items": ds.member(d.elem, d.elemNull)}
	case tMap:
		return map[string]any{"type": ds.collection("object"), "additionalProperties": ds.member(d.elem, d.elemNull)}
	case tStruct:
		return structSchema(d, ds)
	}
	return map[string]any{}
}

func intFormat(small bool) string {
	if small {
		return "int32"
	}
	return "int64"
}

// structSchema describes a struct: its properties, each with the
// keywords of its constraint tags, and the required list.
func structSchema(d *tdesc, ds *describer) map[string]any {
	var plans map[string]*fplan
	if ds.rules && d.t != nil {
		plans = fieldPlans(structDoc(d.t), map[string]*fplan{})
	}
	props := make(map[string]any, len(d.fields))
	var required []any
	for _, f := range d.fields {
		m := typeSchema(f.d, ds)
		fp := plans[f.name]
		req := fp != nil && describeField(m, f, fp, ds.request)
		if (ds.request && f.null) || (!ds.request && f.ptr && !f.omit) {
			// after the tags' keywords (an enum keeps its values); a
			// response's pointer field is null when nil, unless omitted
			nullable(m)
		}
		switch {
		case ds.request:
			// absent, the field keeps its zero value: required when that
			// value fails its rules (validate:"min=1" on an int)
			req = req || fp != nil && !f.ptr && fp.v != nil && !fp.v.omitFirst() && zeroFails(fp.v)
		default:
			// c.JSON sends every field without omitempty (a nil pointer
			// as null)
			req = !f.omit
		}
		if req {
			required = append(required, f.name)
		}
		props[f.name] = m
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	if d.closed { // unknown keys refused (closedStruct); else ignored, as JSON Schema's default says
		out["additionalProperties"] = false
	}
	return out
}

// fieldPlans indexes the fields of a struct plan by JSON name (embedded
// pointer structs flattened).
func fieldPlans(sp *splan, into map[string]*fplan) map[string]*fplan {
	if sp == nil {
		return into
	}
	for i := range sp.fields {
		f := &sp.fields[i]
		if f.name == "" {
			if f.v != nil {
				fieldPlans(f.v.sub, into)
			}
			continue
		}
		if _, dup := into[f.name]; !dup {
			into[f.name] = f
		}
	}
	return into
}

// describeField adds a field's tags to its schema m and reports whether
// the field is required.
func describeField(m map[string]any, f fdesc, fp *fplan, request bool) (required bool) {
	if fp.doc != "" {
		m["description"] = fp.doc
	}
	if fp.example != "" {
		var ex any
		if json.Unmarshal([]byte(fp.example), &ex) != nil {
			ex = fp.example
		}
		m["examples"] = []any{ex}
	}
	required = describeValue(m, fp.v)
	if request && !f.ptr && fp.v != nil && fp.v.omitFirst() {
		rest := *fp.v
		rest.rules = fp.v.rules[1:]
		if zeroFails(&rest) {
			zeroAllowed(m)
		}
	}
	return required
}

// omitKeywords are the keywords zeroAllowed moves under "else": those
// that can refuse a string's or a number's zero value (a number's format,
// int32 or int64, refuses nothing and stays).
var omitKeywords = []string{"minLength", "maxLength", "pattern", "format", "minimum", "maximum",
	"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "const", "not"}

// zeroAllowed states omitempty on a request value whose other rules
// refuse its zero value: the server skips the rules for "" (or 0), so
// the schema accepts it too. An enum gets the zero value added; the
// other keywords apply only to other values ("if": {"const": zero},
// "else": {...}), which generators that ignore "if" read as a plain
// string (or number) rather than failing on an anyOf.
func zeroAllowed(m map[string]any) {
	var zero any
	switch m["type"] {
	case "string":
		zero = ""
	case "integer", "number":
		zero = 0
	default:
		return
	}
	switch e := m["enum"].(type) {
	case []any:
		m["enum"] = append(slices.Clone(e), zero)
	case []string:
		if zero == "" {
			m["enum"] = append(slices.Clone(e), "")
		}
	}
	rest := map[string]any{}
	for _, k := range omitKeywords {
		if v, ok := m[k]; ok && (k != "format" || zero == "") { // an integer's int32/int64 stays
			rest[k] = v
			delete(m, k)
		}
	}
	if len(rest) > 0 {
		m["if"] = map[string]any{"const": zero}
		m["else"] = rest
	}
}

// zeroFails reports whether v's rules refuse the zero value of its type.
func zeroFails(v *vplan) bool {
	if v.ptr || v.t == nil {
		return false
	}
	return len(v.run(reflect.New(v.t).UnsafePointer(), nil, 1, nil)) > 0
}

func (v *vplan) omitFirst() bool { return len(v.rules) > 0 && v.rules[0].omit }

// describeValue adds the keywords of v's rules to m (the schema of the
// value) and its elements' to m's items, additionalProperties and
// propertyNames; it reports whether v has required.
func describeValue(m map[string]any, v *vplan) (required bool) {
	if v == nil {
		return false
	}
	for _, r := range v.rules {
		switch {
		case r.req:
			required = true
			if !v.ptr {
				requiredKeywords(m, v.kind)
			}
		case r.schema != nil:
			r.schema(m)
		}
	}
	if v.elem != nil {
		if items, ok := m["items"].(map[string]any); ok {
			describeValue(items, v.elem)
		} else if ap, ok := m["additionalProperties"].(map[string]any); ok {
			describeValue(ap, v.elem)
		}
	}
	if v.keys != nil {
		names := map[string]any{"type": "string"}
		describeValue(names, v.keys)
		m["propertyNames"] = names
	}
	return required
}

// requiredKeywords states validator's required on a non-pointer value:
// a string is not empty, a number not zero, a bool true.
func requiredKeywords(m map[string]any, k tkind) {
	switch k {
	case tString:
		if n, ok := m["minLength"].(int64); !ok || n < 1 {
			m["minLength"] = int64(1)
		}
	case tInt, tUint, tFloat:
		if _, ok := m["not"]; !ok {
			m["not"] = map[string]any{"const": 0}
		}
	case tBool:
		m["const"] = true
	}
}

// addPattern sets m's pattern, or adds one more under allOf.
func addPattern(m map[string]any, pat string) {
	if _, ok := m["pattern"]; !ok {
		m["pattern"] = pat
		return
	}
	all, _ := m["allOf"].([]any)
	m["allOf"] = append(all, map[string]any{"pattern": pat})
}

// requestSchema describes a value a request sends (see describer).
func requestSchema(d *tdesc) map[string]any {
	return typeSchema(d, &describer{open: map[*tdesc]bool{}, rules: true, request: true})
}
