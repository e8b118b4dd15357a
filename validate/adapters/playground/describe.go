package playground

import (
	"reflect"
	"strconv"
	"strings"
)

// JSONSchema describes T (validate.Describer): the shape of
// validate.Struct[T] (or QueryStruct), plus the validate tags that map
// cleanly to JSON Schema 2020-12:
//
//	required            → the property is in "required"
//	min, max, len       → minLength/maxLength (strings), minimum/maximum
//	                      (numbers), minItems/maxItems (slices, maps: minProperties...)
//	gt, gte, lt, lte    → exclusiveMinimum, minimum, exclusiveMaximum, maximum
//	oneof               → enum
//	email, url, uri,
//	uuid, hostname,
//	ipv4, ipv6, datetime → format
//	dive                → the rules after it apply to the items
//
// Other tags (cross-field rules, custom validators, alternatives with |)
// are checked but not described. Nested structs are described the same
// way.
func (s *Schema[T]) JSONSchema() map[string]any {
	m := s.decode.JSONSchema()
	annotate(m, reflect.TypeFor[T](), 0)
	return m
}

// annotate adds the tags of struct t's fields to the object schema m.
func annotate(m map[string]any, t reflect.Type, depth int) {
	t = deref(t)
	if t == nil || t.Kind() != reflect.Struct || depth > 8 {
		return
	}
	props, _ := m["properties"].(map[string]any)
	for i := range t.NumField() {
		f := t.Field(i)
		name, ft, embedded := fieldJSON(t, f.Name)
		if embedded {
			annotate(m, ft, depth+1)
			continue
		}
		if !f.IsExported() || f.Tag.Get("json") == "-" {
			continue
		}
		ps, _ := props[name].(map[string]any)
		if ps == nil {
			continue
		}
		rules := strings.Split(f.Tag.Get("validate"), ",")
		target, tt, dived := ps, deref(f.Type), false
		for _, r := range rules {
			if r == "dive" {
				items, _ := target["items"].(map[string]any)
				if items == nil {
					break
				}
				target, tt, dived = items, deref(tt.Elem()), true
				continue
			}
			if r == "required" && !dived {
				req, _ := m["required"].([]any)
				m["required"] = append(req, name)
				continue
			}
			applyRule(target, tt, r)
		}
		annotate(ps, f.Type, depth+1)
		if ft := deref(f.Type); ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array {
			if items, ok := ps["items"].(map[string]any); ok {
				annotate(items, ft.Elem(), depth+1)
			}
		}
	}
}

var formats = map[string]string{
	"email": "email", "url": "uri", "uri": "uri", "uuid": "uuid", "uuid4": "uuid",
	"hostname": "hostname", "hostname_rfc1123": "hostname", "ipv4": "ipv4", "ipv6": "ipv6",
	"datetime": "date-time",
}

// applyRule adds one tag rule to the schema s of a value of type t.
func applyRule(s map[string]any, t reflect.Type, rule string) {
	if strings.Contains(rule, "|") {
		return
	}
	tag, param, _ := strings.Cut(rule, "=")
	if f, ok := formats[tag]; ok {
		s["format"] = f
		return
	}
	kind := "number"
	switch t.Kind() {
	case reflect.String:
		kind = "string"
	case reflect.Slice, reflect.Array:
		kind = "array"
	case reflect.Map:
		kind = "object"
	}
	if tag == "oneof" {
		var enum []any
		for _, v := range strings.Fields(param) {
			if kind == "number" {
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return
				}
				enum = append(enum, n)
			} else {
				enum = append(enum, v)
			}
		}
		s["enum"] = enum
		return
	}
	n, err := strconv.ParseFloat(param, 64)
	if err != nil {
		return
	}
	lower, upper := map[string]string{
		"string": "minLength", "array": "minItems", "object": "minProperties", "number": "minimum",
	}[kind], map[string]string{
		"string": "maxLength", "array": "maxItems", "object": "maxProperties", "number": "maximum",
	}[kind]
	count := kind != "number" // lengths and counts are integers
	val := func() any {
		if count {
			return int(n)
		}
		return n
	}
	switch tag {
	case "min", "gte":
		s[lower] = val()
	case "max", "lte":
		s[upper] = val()
	case "len", "eq":
		if tag == "eq" && kind == "number" {
			s["const"] = n
			return
		}
		s[lower], s[upper] = val(), val()
	case "gt":
		if count {
			s[lower] = int(n) + 1
		} else {
			s["exclusiveMinimum"] = n
		}
	case "lt":
		if count {
			s[upper] = int(n) - 1
		} else {
			s["exclusiveMaximum"] = n
		}
	}
}
