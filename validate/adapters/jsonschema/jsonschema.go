package jsonschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/fxhq/fx/validate"
	js "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled JSON Schema as a validate.Schema. Its Result.Value
// is the validated value itself.
type Schema struct {
	s    *js.Schema
	safe bool   // the pre-pass of bounded.go may be used
	src  string // the document Compile was given; "" for New (describe.go)
}

// New wraps a schema compiled with the library's own Compiler (for
// $ref to other resources, custom formats and vocabularies).
func New(s *js.Schema) *Schema { return &Schema{s: s, safe: boundedSafe(s)} }

// Compile compiles one schema document given as JSON text, with "format"
// asserted (an invalid email fails). Cost: done once,
// at startup; validating a request walks the compiled schema without
// re-parsing it.
func Compile(schemaJSON string) (*Schema, error) {
	doc, err := js.UnmarshalJSON(strings.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("jsonschema: schema is not JSON: %w", err)
	}
	c := js.NewCompiler()
	c.AssertFormat() // "format": "email" is a check, not an annotation
	const url = "fx://schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, err
	}
	return &Schema{s: s, safe: boundedSafe(s), src: schemaJSON}, nil
}

// MustCompile is Compile that panics on an invalid schema, for package
// level variables.
func MustCompile(schemaJSON string) *Schema {
	s, err := Compile(schemaJSON)
	if err != nil {
		panic(err)
	}
	return s
}

// Validate validates v (the decoded JSON tree fx hands to schemas). The
// []string of a repeated query key is validated as a JSON array of
// strings.
func (s *Schema) Validate(v any) validate.Result { return s.ValidateLimit(v, 0) }

// ValidateLimit is Validate with at most max issues (validate.Limited).
// The library itself has no way to stop early (it checks the whole value
// and builds one error per failing keyword), so on a large value a
// pre-pass first validates array elements one at a time
// and counts unknown keys, stopping at max; only when it finds fewer
// does the library validate the whole value, whose error tree is then
// walked until max issues are found. Below max the Result is Validate's.
// Measured (BenchmarkHugeInvalidBody): 4 MiB of empty items that each
// fail "required" stop after 51 items.
func (s *Schema) ValidateLimit(v any, max int) validate.Result {
	jv := jsonValue(v)
	if issues := s.bounded(jv, max); issues != nil {
		return validate.Result{Issues: issues}
	}
	res := s.whole(jv, max)
	if res.Issues == nil && res.Err() == nil {
		res.Value = v // the caller's value, []string and all
	}
	return res
}

// whole validates v (a JSON tree) with the library.
func (s *Schema) whole(v any, max int) validate.Result {
	err := s.s.Validate(v)
	if err == nil {
		return validate.Result{Value: v}
	}
	var ve *js.ValidationError
	if !errors.As(err, &ve) {
		return validate.Fail(err)
	}
	var issues []validate.Issue
	collect(ve, &issues, max)
	if len(issues) == 0 {
		issues = append(issues, validate.Issue{Path: slices.Clone(ve.InstanceLocation), Message: "Is not valid"})
	}
	return validate.Result{Issues: issues}
}

var printer = message.NewPrinter(language.English)

// jsonValue returns v with the []string values of a query map as []any,
// the only array type the JSON Schema library knows.
func jsonValue(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	var out map[string]any
	for k, x := range m {
		ss, ok := x.([]string)
		if !ok {
			continue
		}
		if out == nil {
			out = maps.Clone(m)
		}
		a := make([]any, len(ss))
		for i, s := range ss {
			a[i] = s
		}
		out[k] = a
	}
	if out == nil {
		return v
	}
	return out
}

// collect walks the error tree; leaves become issues, at most max of
// them (max <= 0: all).
func collect(e *js.ValidationError, out *[]validate.Issue, max int) {
	if max > 0 && len(*out) >= max {
		return
	}
	at := func(extra ...string) []string {
		p := make([]string, 0, len(e.InstanceLocation)+len(extra))
		p = append(p, e.InstanceLocation...)
		return append(p, extra...)
	}
	add := func(msg string, extra ...string) {
		if max <= 0 || len(*out) < max {
			*out = append(*out, validate.Issue{Path: at(extra...), Message: msg})
		}
	}
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		add("Does not match any of the allowed forms")
		return
	case *kind.Required:
		for _, m := range k.Missing {
			add("Required", m)
		}
		return
	case *kind.DependentRequired:
		for _, m := range k.Missing {
			add("Required when "+strconv.Quote(k.Prop)+" is given", m)
		}
		return
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			add("Unknown key", p)
		}
		return
	}
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collect(c, out, max)
		}
		return
	}
	add(leafMessage(e.ErrorKind))
}

var article = map[string]string{
	"string": "a string", "number": "a number", "integer": "an integer", "boolean": "a boolean",
	"object": "an object", "array": "an array", "null": "null",
}

func kindName(k string) string {
	if a, ok := article[k]; ok {
		return a
	}
	return k
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func rat(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// literal writes a schema value (enum, const) as JSON.
func literal(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// leafMessage is the plain-English message of a leaf error.
func leafMessage(k js.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = kindName(w)
		}
		return "Expected " + strings.Join(want, " or ") + ", got " + kindName(k.Got)
	case *kind.MinLength:
		return "Must be at least " + plural(k.Want, "character", "characters") + " long"
	case *kind.MaxLength:
		return "Must be at most " + plural(k.Want, "character", "characters") + " long"
	case *kind.Minimum:
		return "Must be at least " + rat(k.Want)
	case *kind.Maximum:
		return "Must be at most " + rat(k.Want)
	case *kind.ExclusiveMinimum:
		return "Must be greater than " + rat(k.Want)
	case *kind.ExclusiveMaximum:
		return "Must be less than " + rat(k.Want)
	case *kind.MultipleOf:
		return "Must be a multiple of " + rat(k.Want)
	case *kind.MinItems:
		return "Must have at least " + plural(k.Want, "item", "items")
	case *kind.MaxItems:
		return "Must have at most " + plural(k.Want, "item", "items")
	case *kind.MinProperties:
		return "Must have at least " + plural(k.Want, "key", "keys")
	case *kind.MaxProperties:
		return "Must have at most " + plural(k.Want, "key", "keys")
	case *kind.UniqueItems:
		return "Must not contain duplicates"
	case *kind.Enum:
		vals := make([]string, len(k.Want))
		for i, v := range k.Want {
			vals[i] = literal(v)
		}
		return "Must be one of: " + strings.Join(vals, ", ")
	case *kind.Const:
		return "Must be " + literal(k.Want)
	case *kind.Pattern:
		return "Must match the pattern " + k.Want
	case *kind.Format:
		switch k.Want {
		case "email", "idn-email":
			return "Must be a valid email address"
		case "date-time":
			return "Must be a date-time (RFC 3339)"
		case "uri", "iri", "uri-reference":
			return "Must be a valid URL"
		}
		return "Must be a valid " + k.Want
	case *kind.FalseSchema:
		return "Is not allowed"
	}
	return capitalize(k.LocalizedString(printer))
}

func capitalize(s string) string {
	if s == "" {
		return "Is not valid"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
