package jsonschema

import (
	"slices"
	"strconv"

	"github.com/fxhq/fx/internal/jsontree"
	"github.com/fxhq/fx/validate"
	js "github.com/santhosh-tekuri/jsonschema/v6"
)

// Bounded error work: validation stops at the issue limit. santhosh-
// tekuri/jsonschema has no way to stop early: Validate checks the whole
// value and builds one error per failing keyword before returning. A 4 MiB
// body of 1.4 million empty items under a schema whose items require two
// keys cost it 2 s of CPU and 604 MB (BenchmarkHugeInvalidBody) to build 2.8
// million errors of which fx keeps 101.
//
// So, before the library sees a large value, a pre-pass looks for issues
// where floods come from, cheaply and stopping at max:
//
//   - each element of an array is validated on its own against the
//     subschema that applies to it ("items", "prefixItems"), with the
//     library, one element at a time;
//   - each key of an object with "additionalProperties": false (and no
//     "patternProperties") that "properties" does not name is one "Unknown
//     key" issue, found without the library;
//   - the pre-pass goes down through "properties" and element subschemas
//     first, so a huge array deep inside one element is cut too.
//
// If the pre-pass finds max issues, they are the Result: the whole value
// has at least max issues (see below), so the list is full either way and
// the library never runs on the whole value. Otherwise its work is thrown
// away and the library validates the whole value exactly as without the
// pre-pass: below the limit the Result is the one Validate gives, by
// construction (TestBoundedSameIssues, FuzzBounded).
//
// Why every issue of the pre-pass is an issue of the whole value: the
// library validates each element with a fresh sub-validator (validateVal)
// whose errors depend only on the subschema, the element and its location,
// and adds them to the parent's errors unchanged; the pre-pass makes the
// same call through the subschema's own Validate, and prefixes the
// location. It only goes down a subschema when the library certainly
// applies it: through a schema that does not stop before its object or
// array keywords (no "const", "enum", "format", boolean schema, or draft
// 4-7 "$ref", which hides its siblings) and whose "type" admits the value;
// never through anyOf, oneOf, not, if, contains or the like. Issues of
// different elements and keys are at different paths, so none is counted
// twice; the issues found inside an element by going down are replaced by
// those of validating the element whole. Two things make an element's
// errors depend on more than itself, and a schema that has either anywhere
// never takes the pre-pass: "$dynamicRef"/"$recursiveRef" (resolved from
// the chain of schemas above) and extension keywords (arbitrary code).
//
// Which issues are kept above the limit: those of the first elements, in
// array order, and unknown keys in Go's map order; without the pre-pass
// they were the first of the library's error tree, itself in map order.
//
// The same pre-pass runs over the body bytes in ValidateJSONLimit
// (decoder.go), decoding only the elements it validates, so an attack
// body never becomes a tree.
//
// Cost: a value of at most 8·max nodes (counted, stopping there), a body
// of at most 16·max bytes, skips the pre-pass. On the attack body: 101
// issues after 51 elements (BenchmarkHugeInvalidBody, ...Bytes). A large
// value that has fewer than max issues is validated twice over (each
// element once alone, then the whole), and on the byte path its elements
// are decoded twice.

// boundedSafe reports whether the pre-pass may be used with root: no
// schema reachable from it resolves a reference dynamically or runs
// extension code.
func boundedSafe(root *js.Schema) bool {
	seen := map[*js.Schema]bool{}
	var ok func(s *js.Schema) bool
	ok = func(s *js.Schema) bool {
		if s == nil || seen[s] {
			return true
		}
		seen[s] = true
		if s.DynamicRef != nil || s.RecursiveRef != nil || len(s.Extensions) > 0 {
			return false
		}
		kids := []*js.Schema{s.Ref, s.Not, s.If, s.Then, s.Else, s.PropertyNames,
			s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema}
		kids = append(kids, s.AllOf...)
		kids = append(kids, s.AnyOf...)
		kids = append(kids, s.OneOf...)
		kids = append(kids, s.PrefixItems...)
		for _, k := range s.Properties {
			kids = append(kids, k)
		}
		for _, k := range s.PatternProperties {
			kids = append(kids, k)
		}
		for _, k := range s.DependentSchemas {
			kids = append(kids, k)
		}
		for _, d := range s.Dependencies {
			if k, isSchema := d.(*js.Schema); isSchema {
				kids = append(kids, k)
			}
		}
		for _, a := range []any{s.AdditionalProperties, s.AdditionalItems, s.Items} {
			switch a := a.(type) {
			case *js.Schema:
				kids = append(kids, a)
			case []*js.Schema:
				kids = append(kids, a...)
			}
		}
		for _, k := range kids {
			if !ok(k) {
				return false
			}
		}
		return true
	}
	return ok(root)
}

// smallFactor: a value of at most smallFactor·max nodes skips the
// pre-pass (whatever the library does on it is bounded by a multiple of
// max). A variable only so that the tests of this package can set it to 0.
var smallFactor = 8

// bounded returns max issues of v found by the pre-pass, or nil when it
// found fewer (the caller then validates the whole value).
func (s *Schema) bounded(v any, max int) []validate.Issue {
	if max <= 0 || !s.safe || !jsontree.MoreNodesThan(v, smallFactor*max) {
		return nil
	}
	b := &pass{max: max, path: make([]string, 0, 8)}
	if !b.walk(s.s, v) {
		return nil
	}
	return b.issues[:max:max]
}

type pass struct {
	max    int
	path   []string
	issues []validate.Issue
}

func (b *pass) full() bool { return len(b.issues) >= b.max }

// walk looks for issues of v under sch (at b.path) and reports whether
// the list is full.
func (b *pass) walk(sch *js.Schema, v any) bool {
	switch x := v.(type) {
	case map[string]any:
		if !applies(sch, "object") {
			return false
		}
		if ap, isBool := sch.AdditionalProperties.(bool); isBool && !ap && len(sch.PatternProperties) == 0 {
			for k := range x {
				if _, named := sch.Properties[k]; !named {
					b.issues = append(b.issues, validate.Issue{Path: append(slices.Clone(b.path), k), Message: "Unknown key"})
					if b.full() {
						return true
					}
				}
			}
		}
		for k, sub := range sch.Properties {
			e, present := x[k]
			if !present {
				continue
			}
			b.path = append(b.path, k)
			full := b.walk(sub, e)
			b.path = b.path[:len(b.path)-1]
			if full {
				return true
			}
		}
	case []any:
		if !applies(sch, "array") {
			return false
		}
		for i, e := range x {
			sub := itemSchema(sch, i)
			if sub == nil {
				continue
			}
			b.path = append(b.path, strconv.Itoa(i))
			full := b.element(sub, e)
			b.path = b.path[:len(b.path)-1]
			if full {
				return true
			}
		}
	}
	return false
}

// element validates one element alone, after looking inside it for a
// flood first.
func (b *pass) element(sub *js.Schema, e any) bool {
	mark := len(b.issues)
	if b.walk(sub, e) {
		return true
	}
	b.issues = b.issues[:mark] // replaced by the element's whole issues
	return b.alone(sub, e)
}

// alone validates element e (at b.path) with the library and adds its
// issues.
func (b *pass) alone(sub *js.Schema, e any) bool {
	err := sub.Validate(e)
	if err == nil {
		return false
	}
	ve, isVE := err.(*js.ValidationError)
	if !isVE {
		return false // the whole validation will report it
	}
	var own []validate.Issue
	collect(ve, &own, b.max-len(b.issues))
	// (an error tree always has a leaf, so own is not empty; were it,
	// nothing would be counted, which keeps the count a lower bound)
	for _, is := range own {
		is.Path = append(slices.Clone(b.path), is.Path...)
		b.issues = append(b.issues, is)
	}
	return b.full()
}

// applies reports whether the library certainly applies sch's keywords
// for a value of JSON type t (object or array) to that value.
func applies(sch *js.Schema, t string) bool {
	if sch.Bool != nil || sch.Const != nil || sch.Enum != nil || sch.Format != nil {
		return false
	}
	if sch.Ref != nil && sch.DraftVersion < 2019 {
		return false
	}
	if sch.Types != nil && !sch.Types.IsEmpty() && !slices.Contains(sch.Types.ToStrings(), t) {
		return false
	}
	return true
}

// itemSchema is the subschema the library applies to element i of an
// array under sch, or nil.
func itemSchema(sch *js.Schema, i int) *js.Schema {
	if sch.DraftVersion < 2020 {
		switch items := sch.Items.(type) {
		case *js.Schema:
			return items
		case []*js.Schema:
			if i < len(items) {
				return items[i]
			}
		}
		// past the tuple, or no "items" at all: "additionalItems"
		if a, isSchema := sch.AdditionalItems.(*js.Schema); isSchema {
			return a
		}
		return nil
	}
	if i < len(sch.PrefixItems) {
		return sch.PrefixItems[i]
	}
	return sch.Items2020
}
