package validate

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fxhq/fx/internal/jsontree"
	json "github.com/goccy/go-json"
)

// Validate (checkTree) and the constraint pass after type issues
// (lenientRules) decode the re-encoding of a type-checked tree with the
// one-pass decoder, the decoder of every body. go-json decoded it before;
// that path is kept here as the oracle: the same issues in the same order,
// the same decoded value, over the trees of the decoder's corpus, their
// random mutations, those trees with their mistyped values left out, and
// the same trees read as a query (strings coerced).

// oracleCheckTree is checkTree as it was: go-json decodes the re-encoded
// tree.
func oracleCheckTree(dec *dnode, plan *vplan, query bool, v any, max int) (reflect.Value, []Issue, error) {
	st := newState(query, max)
	out := checkType(dec.d, v, st)
	if len(st.issues) > 0 {
		return reflect.Value{}, oracleLenientRules(dec.d, plan, dec.t, query, out, st.issues, max), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return reflect.Value{}, nil, err
	}
	p := reflect.New(dec.t)
	if err := json.Unmarshal(b, p.Interface()); err != nil {
		return reflect.Value{}, []Issue{decodeIssue(err)}, nil
	}
	if issues := plan.run(p.UnsafePointer(), nil, max, nil); len(issues) > 0 {
		return reflect.Value{}, issues, nil
	}
	return p, nil, nil
}

// oracleLenientRules is lenientRules as it was: go-json decodes the
// re-encoded tree, its left-out values null.
func oracleLenientRules(d *tdesc, plan *vplan, t reflect.Type, query bool, tree any, typeIssues []Issue, max int) []Issue {
	if plan == nil || (max > 0 && len(typeIssues) >= max) {
		return typeIssues
	}
	paths := issuePaths(typeIssues)
	v := jsontree.NullAt(tree, paths)
	if v == nil {
		return typeIssues
	}
	st := newState(query, 0)
	if out := checkType(d, v, st); len(st.issues) == 0 {
		if b, err := json.Marshal(out); err == nil {
			p := reflect.New(t)
			if json.Unmarshal(b, p.Interface()) == nil {
				return plan.run(p.UnsafePointer(), typeIssues, max, paths)
			}
		}
	}
	return typeIssues
}

func assertTreeLikeOracle(t *testing.T, name string, td *typeDecoder, tree any, query bool, max int) {
	t.Helper()
	want, wantIssues, wantErr := oracleCheckTree(td.dec, td.plan, query, tree, max)
	at, issues, err := checkTree(td.dec, td.plan, query, tree, max)
	if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(issues, wantIssues) {
		t.Fatalf("%s %#v (query %v, max %d):\n one decoder: issues=%q err=%v\n go-json:     issues=%q err=%v",
			name, tree, query, max, issues, err, wantIssues, wantErr)
	}
	if want.IsValid() != (at != nil) {
		t.Fatalf("%s %#v (query %v): decoded %v, go-json decoded %v", name, tree, query, at != nil, want.IsValid())
	}
	if at != nil {
		if got := reflect.NewAt(td.t, at); !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Fatalf("%s %#v (query %v):\n one decoder decoded %#v\n go-json decoded     %#v",
				name, tree, query, got.Elem().Interface(), want.Elem().Interface())
		}
	}
}

// queryTree is v as a query string gives it to QueryStruct: the members
// of a top-level object, a number or a boolean written as a string, an
// array of them as a []string; nothing else (no query holds an object).
func queryTree(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		if s, ok := queryString(e); ok {
			out[k] = s
			continue
		}
		a, ok := e.([]any)
		if !ok {
			continue
		}
		vals := make([]string, 0, len(a))
		for _, x := range a {
			if s, ok := queryString(x); ok {
				vals = append(vals, s)
			}
		}
		out[k] = vals
	}
	return out
}

// queryString is a scalar as a query string spells it.
func queryString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// assertTreesLikeOracle runs assertTreeLikeOracle over the tree of body
// (when DecodeJSON accepts it and it is not null), as a body and as a
// query, at the limits 0, 1 and 3.
func assertTreesLikeOracle(t *testing.T, name string, td *typeDecoder, body []byte) {
	t.Helper()
	tree, err := DecodeJSON(body)
	if err != nil || tree == nil {
		return
	}
	q := queryTree(tree)
	// the tree with its mistyped values left out (jsontree.Hole), as the
	// playground adapter hands it to Validate after its type issues
	st := newState(false, 0)
	checkType(td.d, tree, st)
	holes := jsontree.NullAt(tree, issuePaths(st.issues))
	for _, max := range []int{0, 1, 3} {
		assertTreeLikeOracle(t, name, td, tree, false, max)
		if holes != nil && len(st.issues) > 0 {
			assertTreeLikeOracle(t, name, td, holes, false, max)
		}
		if q != nil && td.d.kind == tStruct {
			assertTreeLikeOracle(t, name, td, q, true, max)
		}
	}
}

func TestTreeDecodeMatchesGoJSON(t *testing.T) {
	t.Parallel()
	for name, td := range decodersOf(t) {
		for _, body := range decodeCorpus(5, 33, 100) {
			assertTreesLikeOracle(t, name, td, []byte(body))
		}
	}
}

// TestTreeDecodeRandom: trees generated from the types, well typed, then
// with one byte of their text changed.
func TestTreeDecodeRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for name, td := range decodersOf(t) {
		eachGenerated(r, td.d, 2000, 150, func(body []byte, _ bool) {
			assertTreesLikeOracle(t, name, td, body)
		})
	}
}

// FuzzTreeDecode holds the tree path to go-json's decode of it on any
// body's tree; its seed corpus is the decoder's.
func FuzzTreeDecode(f *testing.F) {
	fuzzDecoders(f, assertTreesLikeOracle)
}

// TestLenientRulesReadHoles: the mistyped values lenientRules leaves out
// are null in the re-encoded tree, where the strict reading of a body
// refuses null (a plain int, a []int's element); the one decoder reads
// them as the zero value, so the constraints of the rest still run.
func TestLenientRulesReadHoles(t *testing.T) {
	type holes struct {
		N    int    `json:"n"`
		Ints []int  `json:"ints" validate:"unique"`
		Name string `json:"name" validate:"min=3"`
	}
	s := Struct[holes]()
	got := s.Validate(map[string]any{"n": "x", "ints": []any{1.0, "y", 0.0}, "name": "ab"}).Issues
	want := []Issue{
		{Path: []string{"ints", "1"}, Message: "Expected an integer, got a string"},
		{Path: []string{"n"}, Message: "Expected an integer, got a string"},
		{Path: []string{"ints"}, Message: "Must not contain duplicates"},
		{Path: []string{"name"}, Message: "Must be at least 3 characters long"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// TestDeepTreeRefusedAsABody: a tree nested deeper than any body fx
// accepts (MaxDepth) is refused as that body is, by the one decoder.
func TestDeepTreeRefusedAsABody(t *testing.T) {
	type node struct {
		Next *node `json:"next"`
	}
	var tree any = map[string]any{}
	for range MaxDepth + 1 {
		tree = map[string]any{"next": tree}
	}
	got := Struct[node]().Validate(tree).Issues
	want := []Issue{{Path: []string{}, Message: "Not valid JSON: nested more than " + strconv.Itoa(MaxDepth) + " levels deep"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if strings.Contains(got[0].Message, "panic") {
		t.Fatal(got)
	}
}
