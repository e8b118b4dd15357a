package validate

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/fxhq/fx/internal/jsonscan"
	"github.com/fxhq/fx/internal/jsontree"
	json "github.com/goccy/go-json"
)

// StructSchema validates a JSON value against a Go type T (its JSON tags,
// as encoding/json reads them, and its constraint tags) and decodes it
// into a *T. Build it with Struct or QueryStruct.
//
// Unlike a plain decoder, which stops at the first mismatch, it reports
// the type error of every field together ("Expected a string, got a
// number" at ["items","1","sku"]), and then the constraint tags
// (`validate:"required,min=3"`, `pattern:"..."`: the words of docs/tags.md)
// of every field: the fields that type-checked are still checked when
// others did not, so a float where an int belongs does not hide a
// too-long string elsewhere. A field that is absent keeps its zero value,
// as with encoding/json (so `required` refuses it), and unknown keys are
// ignored, unless the struct has a blank field tagged
// additionalProperties:"false" (`_ struct{} ...`): then each is the
// issue "Unknown key" at its path, and its JSON Schema says
// additionalProperties false.
//
// Result.Value is a *T. It implements Decoder with the decoder that
// Decode uses too: a valid body is decoded straight from the bytes into a T in one pass that checks the types as
// it writes each field (no intermediate tree, one allocation for the T,
// one for its strings, one per slice and pointer), and the constraints
// run over the decoded T through a plan compiled once, here (no
// reflection, no allocation on a value that passes them, except the url
// and uri rules and maps). A body that does not fit T is never
// decoded whole (go-json decodes all of a body before reporting its
// first type error); its
// type issues are found over the bytes, stopping at the limit of
// ValidateJSONLimit (Limited, LimitedDecoder), and only when they leave
// room is the body decoded leniently (every mistyped value null) to check
// the constraints of the rest.
type StructSchema[T any] struct {
	d     *tdesc
	plan  *vplan // the constraint tags of T; nil: none (or TypesOnly)
	rules bool   // constraint tags are read (not TypesOnly): JSONSchema shows them
	query bool
	wide  bool         // T holds a 64-bit integer somewhere (see ValidateJSON)
	dec   *dnode       // the one-pass decoding plan of T (plan_decode.go)
	body  *typeDecoder // Decode: fx.Op's decoder over the same plans
}

// StructOption adjusts Struct, QueryStruct and their Compile forms.
type StructOption func(*structOptions)

type structOptions struct{ typesOnly bool }

// TypesOnly makes the schema ignore constraint tags (validate, pattern):
// it checks and documents the types only. Adapters that run another
// constraint engine over the decoded T (validate/adapters/playground) use
// it, so that words the core does not know are not start-up errors.
func TypesOnly() StructOption { return func(o *structOptions) { o.typesOnly = true } }

// Struct returns the schema of T, which must be a struct type (or a
// pointer, slice or map of one). The type and its tags are examined once,
// here; a tag that cannot be honoured panics with the *TagError of each
// (joined), naming type, field and word: use CompileStruct to get the
// error instead.
func Struct[T any](opts ...StructOption) *StructSchema[T] {
	return must(CompileStruct[T](opts...))
}

// QueryStruct returns the schema of T for a route's query string: fields
// of T are matched by their JSON tags, and the strings of the query are
// read as fx.Op's path, query and header fields are read (number
// grammar, ParseBool's booleans, RFC 3339, UnmarshalText, valid UTF-8;
// empty value = absent for non-string fields, repeated key only for
// slice fields, whose one value is element 0); then the constraint tags
// are checked as Struct does.
// Result.Value is a *T. It panics as Struct does.
func QueryStruct[T any](opts ...StructOption) *StructSchema[T] {
	return must(CompileQueryStruct[T](opts...))
}

// CompileStruct is Struct returning the tag errors (each a *TagError,
// joined with errors.Join) instead of panicking.
func CompileStruct[T any](opts ...StructOption) (*StructSchema[T], error) {
	return compileStruct[T](false, opts)
}

// CompileQueryStruct is QueryStruct returning the tag errors instead of
// panicking.
func CompileQueryStruct[T any](opts ...StructOption) (*StructSchema[T], error) {
	return compileStruct[T](true, opts)
}

func compileStruct[T any](query bool, opts []StructOption) (*StructSchema[T], error) {
	var o structOptions
	for _, fn := range opts {
		fn(&o)
	}
	t := reflect.TypeFor[T]()
	d := descOf(t)
	s := &StructSchema[T]{d: d, query: query, wide: hasWideInt(d, map[*tdesc]bool{}), rules: !o.typesOnly, dec: dplanOf(t)}
	if s.rules {
		plan, err := planOf(t)
		if err != nil {
			return nil, err
		}
		s.plan = plan
	}
	s.body = &typeDecoder{d: d, t: t, plan: s.plan, dec: s.dec}
	return s, nil
}

func must[S any](s S, err error) S {
	if err != nil {
		panic(err)
	}
	return s
}

// Validate checks v (the generic tree: map[string]any, []any, float64,
// ...) against T and decodes it into a new *T. nil (an empty body) is the
// issue "Required".
func (s *StructSchema[T]) Validate(v any) Result { return s.ValidateLimit(v, 0) }

// ValidateLimit is Validate stopping at max issues (see Limited).
//
// Cost (Validate, the query path of a QueryStruct): the type check of
// the tree, its re-encoding and the one-pass decode of the bytes (the
// decoder of bodies) into a new T, then the constraints. Counted in
// instructions (BenchmarkStructValidateTree's trees), the one pass costs
// 3% (a query) to 15% (a body holding a map, which the pass hands to
// go-json) more than go-json's decode of the same bytes did: it checks
// the strict grammar, which a re-encoding cannot break; allocations are
// the same.
func (s *StructSchema[T]) ValidateLimit(v any, max int) Result {
	if v == nil {
		return Result{Issues: []Issue{{Path: []string{}, Message: "Required"}}}
	}
	at, issues, err := checkTree(s.dec, s.plan, s.query, v, max)
	switch {
	case err != nil:
		return Fail(fmt.Errorf("validate: re-encoding a checked value: %w", err))
	case len(issues) > 0:
		return Result{Issues: issues}
	}
	return Result{Value: (*T)(at)}
}

// checkTree is ValidateLimit over the non-nil tree v for the type dec
// decodes: the type check of the tree; then, when it passes, the tree
// re-encoded and decoded by the one-pass decoder into a new value (at) and
// the constraints run over it; else the type issues followed by the
// constraint issues of the rest (lenientRules). err is the re-encoding's
// (a tree holding what JSON cannot say: a channel, a cycle).
func checkTree(dec *dnode, plan *vplan, query bool, v any, max int) (at unsafe.Pointer, issues []Issue, err error) {
	st := newState(query, max)
	out := checkType(dec.d, v, st)
	if len(st.issues) > 0 {
		return nil, lenientRules(dec.d, plan, dec.t, query, out, st.issues, max), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, nil, err
	}
	at = reflect.New(dec.t).UnsafePointer()
	if is := decodeChecked(dec, b, at); is != nil {
		return nil, []Issue{*is}, nil
	}
	if issues = plan.run(at, nil, max, nil); len(issues) > 0 {
		return nil, issues, nil
	}
	return at, nil, nil
}

// checked runs the constraints over a decoded *T.
func (s *StructSchema[T]) checked(p *T, max int) Result {
	if issues := s.plan.run(unsafe.Pointer(p), nil, max, nil); len(issues) > 0 {
		return Result{Issues: issues}
	}
	return Result{Value: p}
}

// lenientRules returns typeIssues followed by the constraint issues of
// tree with every mistyped value replaced by null, decoded into a new
// value of t; nothing at or below a mistyped path is checked. It does
// nothing when the issue list is already full. Cost: the failure path
// only (a copy of the maps and slices on the mistyped paths, a re-encode
// and the one-pass decoder's pass over it).
func lenientRules(d *tdesc, plan *vplan, t reflect.Type, query bool, tree any, typeIssues []Issue, max int) []Issue {
	if plan == nil || (max > 0 && len(typeIssues) >= max) {
		return typeIssues
	}
	paths := issuePaths(typeIssues)
	v := jsontree.NullAt(tree, paths)
	if v == nil {
		return typeIssues
	}
	st := newState(query, 0)
	out := checkType(d, v, st)
	if len(st.issues) > 0 {
		return typeIssues
	}
	b, err := json.Marshal(out)
	if err != nil {
		return typeIssues
	}
	p := reflect.New(t)
	if decodeChecked(dplanOf(t), b, p.UnsafePointer()) != nil {
		return typeIssues
	}
	return plan.run(p.UnsafePointer(), typeIssues, max, paths)
}

// decodeChecked decodes b, the re-encoding of a tree the type check
// accepted, into the value at at (a zero value of dec's type) with the
// one-pass decoder every body goes through (dnode.pass): nil when it is
// decoded, else the one issue of the value it refuses, worded as for a
// body (refusal.issue: a custom UnmarshalJSON's error, "Has an invalid
// value"). A null in b is the zero value wherever it stands, as go-json
// reads it: the type check refuses null where a type does not take it,
// so such a null is a value left out (jsontree.Hole: lenientRules's, or
// the tree an adapter hands Validate after its own type issues). A tree
// nested deeper than MaxDepth, which no body can be, is refused as such
// a body is. Cost: the pass over b, as for a body.
func decodeChecked(dec *dnode, b []byte, at unsafe.Pointer) *Issue {
	_, stop := dec.pass(b, at, nil, true)
	if stop == nil {
		return nil
	}
	issues, _, err := stopped(nil, b, 0, stop)
	if err != nil {
		is := jsonIssueOf(err)
		return &is
	}
	return &issues[0]
}

// ValidateJSON answers exactly as Validate(DecodeJSON(body)) does, reading
// body with the decoder Decode uses (see Decoder): one pass checks the
// strict grammar, decodes body into a new T and the constraints run over
// it; no tree is built. A body the pass stops on is read again only to
// word its issues, as Decode's are: the grammar's fault, or the type
// issues found over the bytes (stopping at the issue limit of
// ValidateJSONLimit) followed by the constraint issues of the fields that
// type-checked. Three bodies take the tree, so that the answer stays
// Validate's: one the pass refuses though its types fit (an integer
// written 2.0, a custom UnmarshalJSON's error: Validate reads the
// re-encoded tree), one with an integer of 16 digits or more for a T with
// 64-bit integer fields (the pass decodes 2^53+3 exactly into an int64
// where Validate, which sees the float64 of the tree, rejects it), and,
// for a QueryStruct, one the pass stops on (Validate reads numbers and
// booleans written as strings).
func (s *StructSchema[T]) ValidateJSON(body []byte) Result { return s.ValidateJSONLimit(body, 0) }

// ValidateJSONLimit is ValidateJSON stopping at max issues (see
// LimitedDecoder).
func (s *StructSchema[T]) ValidateJSONLimit(body []byte, max int) Result {
	if jsonscan.IsNull(body) {
		return s.Validate(nil) // as Validate(DecodeJSON(body)) does
	}
	p := new(T)
	long, stop := s.dec.pass(body, unsafe.Pointer(p), nil, false)
	if stop == nil && !(long && s.wide) {
		return s.checked(p, max)
	}
	if stop != nil && !s.query {
		issues, refused, err := stopped(s.body, body, max, stop)
		switch {
		case err != nil:
			return Result{Issues: []Issue{jsonIssueOf(err)}}
		case !refused:
			return Result{Issues: issues}
		}
	}
	tree, err := DecodeJSON(body)
	if err != nil {
		return Result{Issues: []Issue{jsonIssueOf(err)}}
	}
	return s.ValidateLimit(tree, max)
}

// ChecksGrammar reports true: ValidateJSON checks the strict grammar of
// every body in its one pass and answers a body CheckJSON rejects with
// that error's one issue (see GrammarChecker), so fx does not scan the
// body a second time before it.
func (s *StructSchema[T]) ChecksGrammar() bool { return true }

// Decode is what fx.JSONBody does with a body: one pass checks the strict grammar, decodes the body into a new *T and runs the
// constraint tags (their issues, if any, are returned). A body the pass
// does not decide alone is read again: err is CheckJSON's *JSONError when
// the grammar refuses it; when it fits T (every type check of Validate
// passes) go-json decodes it; otherwise issues are those
// ValidateJSONLimit(body, max) reports, found over the bytes and stopping
// at max, and nothing is decoded. Unlike ValidateJSON, null gives the
// zero T. A body that fits the types but that a custom UnmarshalJSON
// refuses is the one issue "Has an invalid value". Strings in *p never
// alias body. It is the decoder of fx.Op's bodies, for a T known at
// compile time.
func (s *StructSchema[T]) Decode(body []byte, max int) (p *T, issues []Issue, err error) {
	p = new(T)
	if issues, err = s.body.Decode(body, p, max); err != nil || len(issues) > 0 {
		return nil, issues, err
	}
	return p, nil, nil
}

// treeOf decodes body for lenientRules, only when it will be used: the
// type has constraints and the type issues leave room.
func treeOf(body []byte, plan *vplan, typeIssues []Issue, max int) any {
	if plan == nil || (max > 0 && len(typeIssues) >= max) {
		return nil
	}
	v, _ := DecodeJSON(body) // accepted by CheckJSON already
	return v
}

// hasWideInt reports whether d has a 64-bit integer anywhere below it.
func hasWideInt(d *tdesc, seen map[*tdesc]bool) bool {
	if seen[d] {
		return false
	}
	seen[d] = true
	switch d.kind {
	case tInt, tUint:
		return d.bits == 64
	case tSlice, tMap:
		return hasWideInt(d.elem, seen)
	case tStruct:
		for _, f := range d.fields {
			if hasWideInt(f.d, seen) {
				return true
			}
		}
	}
	return false
}
