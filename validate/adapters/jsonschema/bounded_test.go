package jsonschema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fxhq/fx/validate"
	"github.com/fxhq/fx/validate/validatetest"
)

// diffSchemas are the schemas of the differential test: tuples and
// additional items (drafts 7 and 2020), $ref, unknown keys, and keywords
// the pre-pass must not go through (anyOf, enum, draft-7 $ref siblings).
var diffSchemas = []string{
	`{
		"type": "object",
		"required": ["name", "items"],
		"properties": {
			"name": {"type": "string", "minLength": 1},
			"items": {
				"type": "array", "minItems": 1,
				"items": {
					"type": "object",
					"required": ["sku", "qty"],
					"additionalProperties": false,
					"properties": {
						"sku": {"type": "string"},
						"qty": {"type": "integer", "minimum": 1},
						"items": {"type": "array", "items": {"type": "object", "required": ["sku"], "additionalProperties": false}}
					}
				}
			}
		}
	}`,
	`{
		"$schema": "http://json-schema.org/draft-07/schema#",
		"definitions": {"item": {"type": "object", "required": ["sku"], "properties": {"qty": {"minimum": 1}}}},
		"type": "object",
		"additionalProperties": false,
		"properties": {
			"name": {"type": "string"},
			"items": {"type": "array", "maxItems": 3, "items": [{"type": "string"}, {"$ref": "#/definitions/item"}], "additionalItems": {"$ref": "#/definitions/item"}},
			"sku": {"$ref": "#/definitions/item", "items": {"type": "string"}},
			"qty": {"additionalItems": {"type": "integer"}}
		}
	}`,
	`{
		"$defs": {"item": {"type": "object", "required": ["sku", "qty"], "properties": {"items": {"$ref": "#"}}}},
		"type": ["object", "array"],
		"prefixItems": [{"type": "object"}],
		"items": {"$ref": "#/$defs/item"},
		"uniqueItems": true,
		"properties": {
			"name": {"enum": [[{"sku": "a"}]], "items": {"required": ["qty"]}},
			"items": {"anyOf": [{"type": "array", "items": {"required": ["sku"]}}, {"type": "string"}]},
			"sku": {"type": "array", "items": {"$ref": "#/$defs/item"}, "contains": {"required": ["qty"]}},
			"qty": {"type": "array", "items": false}
		},
		"patternProperties": {"^x": {"type": "string"}},
		"additionalProperties": false
	}`,
}

// tree builds a small JSON tree from fuzz bytes: objects with keys of the
// schemas above (and unknown ones), arrays, strings and numbers.
func tree(data []byte) any {
	keys := []string{"name", "items", "sku", "qty", "size", "x1"}
	i := 0
	next := func() byte {
		if i >= len(data) {
			return 0
		}
		i++
		return data[i-1]
	}
	var build func(depth int) any
	build = func(depth int) any {
		b := next()
		if depth > 4 {
			b %= 4
		}
		switch b % 7 {
		case 0:
			return float64(b / 7 % 3)
		case 1:
			return []string{"", "a", "b"}[b/7%3]
		case 2:
			return nil
		case 3:
			return b%2 == 0
		case 4, 5:
			m := map[string]any{}
			for n := int(next() % 5); n > 0; n-- {
				m[keys[int(next())%len(keys)]] = build(depth + 1)
			}
			return m
		}
		a := []any{}
		for n := int(next() % 8); n > 0; n-- {
			a = append(a, build(depth+1))
		}
		return a
	}
	return build(0)
}

// checkBounded holds the bounded path to the library's whole validation
// (validatetest.CompareLimits), with the pre-pass on every value, however
// small.
func checkBounded(t *testing.T, s *Schema, body []byte, max int) {
	t.Helper()
	savedF, savedB := smallFactor, smallBody
	smallFactor, smallBody = 0, 0
	defer func() { smallFactor, smallBody = savedF, savedB }()
	if err := validatetest.CompareLimits(s, body, max); err != nil {
		t.Fatal(err)
	}
}

// FuzzBounded is the differential test of the pre-pass (bounded.go)
// against the library's whole validation; its seeds run in go test.
func FuzzBounded(f *testing.F) {
	for _, seed := range []string{
		"\x04\x04\x01\x05\x06\x04\x04\x04\x00\x04\x00",
		"\x05\x04\x01\x06\x07\x04\x00\x04\x01\x04\x02\x05\x03\x04\x04\x00",
		"\x06\x07\x04\x01\x04\x00\x04\x02\x04\x03\x04\x04\x00\x04\x05",
		"\x04\x03\x00\x06\x05\x05\x01\x01\x07\x04\x02\x03\x06\x03\x05\x02\x02\x00",
		"\x05\x04\x03\x06\x05\x04\x01\x04\x02\x01\x06\x03\x04\x00\x04\x01\x04\x02\x05\x00",
		"\x04\x04\x01\x06\x07\x0b\x0b\x0b\x0b\x0b\x0b\x0b\x04\x03\x0e\x01\x15\x05\x2a",
	} {
		for i := range diffSchemas {
			for _, max := range []byte{1, 2, 3, 5, 8} {
				f.Add(byte(i), max, []byte(seed))
			}
		}
	}
	schemas := make([]*Schema, len(diffSchemas))
	for i, d := range diffSchemas {
		schemas[i] = MustCompile(d)
		if !schemas[i].safe {
			f.Fatalf("schema %d does not take the pre-pass", i)
		}
	}
	f.Fuzz(func(t *testing.T, which, max byte, data []byte) {
		s := schemas[int(which)%len(schemas)]
		body, _ := json.Marshal(tree(data)) // a tree of JSON values: no error
		checkBounded(t, s, body, int(max%12)+1)
	})
}

// TestBoundedSameIssues: many random values, each through every schema
// and several limits (the seeds of FuzzBounded are few; this covers
// more, deterministically).
func TestBoundedSameIssues(t *testing.T) {
	schemas := make([]*Schema, len(diffSchemas))
	for i, d := range diffSchemas {
		schemas[i] = MustCompile(d)
	}
	// values aimed at each rule of applies and itemSchema
	for _, body := range []string{
		`{"sku":[1,2,3],"qty":["a",1,2]}`,
		`{"name":[{"sku":"a"},{}],"items":[{},{},{"sku":1}]}`,
		`{"items":[1,{},{"qty":0},{"qty":0}]}`,
		`[{},{},[],{"items":[{},{}]}]`,
		`{"qty":[1,2],"x1":1,"zz":2,"items":[{"sku":"a","qty":1,"items":[{},{"b":1}]}]}`,
		`{"it\u0065ms":[{},{"\u0062":1}],"\u00e9":1}`,
	} {
		for _, s := range schemas {
			for max := 1; max < 8; max++ {
				checkBounded(t, s, []byte(body), max)
			}
		}
	}
	stopped := 0
	validatetest.RandomInputs(1, 64, 3000, func(data []byte) {
		v := tree(data)
		body, _ := json.Marshal(v)
		for _, s := range schemas {
			for _, max := range []int{1, 2, 4, 9} {
				checkBounded(t, s, body, max)
				saved := smallFactor
				smallFactor = 0
				if s.bounded(v, max) != nil {
					stopped++
				}
				smallFactor = saved
			}
		}
	})
	if stopped < 1000 {
		t.Errorf("the pre-pass stopped early only %d times: the test does not exercise it", stopped)
	}
}

// TestBoundedUnsafeSchema: a schema with $dynamicRef never takes the
// pre-pass (an element's errors could depend on the schemas above it).
func TestBoundedUnsafeSchema(t *testing.T) {
	s := MustCompile(`{"$dynamicAnchor": "n", "type": "array", "items": {"$dynamicRef": "#n"}}`)
	if s.safe {
		t.Error("a schema with $dynamicRef takes the pre-pass")
	}
	if !MustCompile(`{"items": {"$ref": "#"}}`).safe {
		t.Error("a plain recursive $ref does not take the pre-pass")
	}
}

// TestBoundedWork: a flood of failing elements, at the top level or
// nested in one element, stops at the limit on both paths: the
// allocations do not grow with the 200,000 elements (the library
// allocates several errors per element).
func TestBoundedWork(t *testing.T) {
	s := MustCompile(diffSchemas[0])
	for name, prefix := range map[string]string{
		"top":    `{"name":"","items":[`,
		"nested": `{"name":"a","items":[{"sku":"a","qty":1,"items":[`,
	} {
		var b strings.Builder
		b.WriteString(prefix + `{}`)
		for range 200_000 {
			b.WriteString(`,{}`)
		}
		b.WriteString(`]` + strings.Repeat("}]", strings.Count(prefix, "[")-1) + `}`)
		body := []byte(b.String())
		tree, err := validate.DecodeJSON(body)
		if err != nil {
			t.Fatal(name, err)
		}
		run := func() (int, int) {
			return len(s.ValidateJSONLimit(body, 10).Issues), len(s.ValidateLimit(tree, 10).Issues)
		}
		if n1, n2 := run(); n1 != 10 || n2 != 10 {
			t.Errorf("%s: %d and %d issues, want 10", name, n1, n2)
		}
		if a := testing.AllocsPerRun(2, func() { run() }); a > 5000 {
			t.Errorf("%s: %.0f allocations: the work is not bounded", name, a)
		}
	}
}
