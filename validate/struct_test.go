package validate_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/fxhq/fx/validate"
)

type Line struct {
	SKU string `json:"sku"`
	Qty int8   `json:"qty"`
}

type Base struct {
	ID uint `json:"id"`
}

type Order struct {
	Base
	Name    string            `json:"name"`
	Price   float64           `json:"price"`
	Gift    bool              `json:"gift"`
	Lines   []Line            `json:"lines"`
	Labels  map[string]string `json:"labels"`
	When    time.Time         `json:"when"`
	Note    *string           `json:"note,omitempty"`
	Any     any               `json:"any"`
	Ignored string            `json:"-"`
	//lint:ignore U1000 unexported on purpose: the tests check that Struct ignores it
	secret string
}

func TestStructReportsAllTypeErrors(t *testing.T) {
	s := validate.Struct[Order]()
	body := `{"id":-1,"name":5,"price":"x","gift":"no","lines":[{"sku":"a","qty":1},{"sku":2,"qty":300},{"qty":1.5}],"labels":{"a":1},"when":"yesterday","any":{"x":[1]}}`
	want := map[string]string{
		"id":          "Must be at least 0",
		"name":        "Expected a string, got a number",
		"price":       "Expected a number, got a string",
		"gift":        "Expected a boolean, got a string",
		"lines.1.sku": "Expected a string, got a number",
		"lines.1.qty": "Must be at most 127",
		"lines.2.qty": "Expected an integer, got 1.5",
		"labels.a":    "Expected a string, got a number",
		"when":        `Expected a date-time string (RFC 3339), got "yesterday"`,
	}
	if got := issuesOf(s.Validate(mustDecode(t, body))); !reflect.DeepEqual(got, want) {
		t.Errorf("Validate\n got %v\nwant %v", got, want)
	}
	if got := issuesOf(s.ValidateJSON([]byte(body))); !reflect.DeepEqual(got, want) {
		t.Errorf("ValidateJSON\n got %v\nwant %v", got, want)
	}
}

func TestStructFastAndSlowPathAgree(t *testing.T) {
	s := validate.Struct[Order]()
	body := `{"ID":7,"name":"Ada","price":2.5,"gift":true,"lines":[{"sku":"a","qty":1}],"labels":{"k":"v"},"when":"2024-01-02T03:04:05Z","note":"hi","unknown":[1]}`
	fast := s.ValidateJSON([]byte(body))
	slow := s.Validate(mustDecode(t, body))
	if len(fast.Issues)+len(slow.Issues) > 0 {
		t.Fatalf("issues: %v / %v", fast.Issues, slow.Issues)
	}
	f, ok := fast.Value.(*Order)
	if !ok || f.Name != "Ada" || f.ID != 7 || f.Lines[0].Qty != 1 || *f.Note != "hi" || f.When.Year() != 2024 {
		t.Fatalf("fast value %#v", fast.Value)
	}
	if !reflect.DeepEqual(fast.Value, slow.Value) {
		t.Errorf("fast %#v\nslow %#v", fast.Value, slow.Value)
	}
	if got := issuesOf(s.Validate(nil)); got[""] != "Required" {
		t.Errorf("nil: %v", got)
	}
	if got := issuesOf(s.ValidateJSON([]byte(`[1]`))); got[""] != "Expected an object, got an array" {
		t.Errorf("array: %v", got)
	}
	if got := issuesOf(s.ValidateJSON([]byte(`{"price":1e999}`))); got["price"] != "Number is too large" {
		t.Errorf("huge: %v", got)
	}
}

type ListParams struct {
	Limit  int      `json:"limit"`
	Active bool     `json:"active"`
	Tags   []string `json:"tag"`
	Q      string   `json:"q"`
}

func TestQueryStruct(t *testing.T) {
	s := validate.QueryStruct[ListParams]()
	res := s.Validate(map[string]any{"limit": "1e1", "active": "true", "tag": []string{"a", "b"}, "q": "", "other": "x"})
	if len(res.Issues) > 0 {
		t.Fatal(res.Issues)
	}
	want := ListParams{Limit: 10, Active: true, Tags: []string{"a", "b"}}
	if got := *res.Value.(*ListParams); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	got := issuesOf(s.Validate(map[string]any{"limit": []string{"1", "2"}, "active": "yes"}))
	wantIssues := map[string]string{"limit": "Expected a single value, got 2", "active": `Expected true or false, got "yes"`}
	if !reflect.DeepEqual(got, wantIssues) {
		t.Errorf("got %v", got)
	}
	if res := s.Validate(map[string]any{"limit": ""}); len(res.Issues) > 0 || res.Value.(*ListParams).Limit != 0 {
		t.Errorf("empty value is not absent: %+v", res)
	}
}

func BenchmarkStructValidateJSON(b *testing.B) {
	s := validate.Struct[Line]()
	body := []byte(`{"sku":"abc","qty":3}`)
	b.ReportAllocs()
	for b.Loop() {
		s.ValidateJSON(body)
	}
}

// BenchmarkStructValidateTree is Validate of a tree: a decoded body (a
// Struct nested in a builder object, a caller holding the tree) and a
// query's map (QueryStruct, fx's query path): the type check of the
// tree, its re-encoding, the one-pass decode of it and the rules.
func BenchmarkStructValidateTree(b *testing.B) {
	type list struct {
		Limit int      `json:"limit" validate:"min=1,max=100"`
		Sort  string   `json:"sort"`
		Q     string   `json:"q"`
		Tags  []string `json:"tags"`
	}
	body, err := validate.DecodeJSON([]byte(`{"id":7,"name":"Ada","price":9.5,"gift":true,"lines":[{"sku":"a","qty":1},{"sku":"b","qty":2}],"labels":{"k":"v"}}`))
	if err != nil {
		b.Fatal(err)
	}
	query := map[string]any{"limit": "20", "sort": "asc", "q": "shoes", "tags": []string{"a", "b"}}
	for _, c := range []struct {
		name string
		s    validate.Schema
		tree any
	}{
		{"body", validate.Struct[Order](), body},
		{"query", validate.QueryStruct[list](), query},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res := c.s.Validate(c.tree); len(res.Issues) > 0 {
					b.Fatal(res.Issues)
				}
			}
		})
	}
}

type wideNums struct {
	I   int            `json:"i"`
	U   uint64         `json:"u"`
	F32 float32        `json:"f32"`
	M   map[string]int `json:"m"`
}

// TestStructFastPathMatchesTree: ValidateJSON gives the Result of
// Validate(DecodeJSON(body)), also for integers beyond 2^53 (which go-json
// alone decodes exactly into an int64) and for a float32 overflow.
func TestStructFastPathMatchesTree(t *testing.T) {
	s := validate.Struct[wideNums]()
	for body, want := range map[string]map[string]string{
		`{"i":9007199254740995}`:                {"i": "Must be at most 9007199254740992"},
		`{"i":-9007199254740995}`:               {"i": "Must be at least -9007199254740992"},
		`{"u":18446744073709551615}`:            {"u": "Must be at most 9007199254740992"},
		`{"m":{"a":9007199254740995}}`:          {"m.a": "Must be at most 9007199254740992"},
		`{"f32":1e39}`:                          {"f32": "Number is too large"},
		`{"i":9007199254740993,"u":1}`:          {},
		`{"i":1,"m":{"1234567890123456789":2}}`: {},
	} {
		fast := s.ValidateJSON([]byte(body))
		slow := s.Validate(mustDecode(t, body))
		if got := issuesOf(fast); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: fast path issues %v, want %v", body, got, want)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s: fast %+v\nslow %+v", body, fast, slow)
		}
	}
}

type timedQuery struct {
	When  time.Time   `json:"when"`
	Times []time.Time `json:"t"`
	Blob  []byte      `json:"blob"`
}

// TestQueryStructChecksStrings: a time or base64 query value is checked as
// the same field in a body is, each issue at its own key.
func TestQueryStructChecksStrings(t *testing.T) {
	s := validate.QueryStruct[timedQuery]()
	got := issuesOf(s.Validate(map[string]any{"when": "yesterday", "t": []string{"2024-01-02T03:04:05Z", "x"}, "blob": "!!"}))
	want := map[string]string{
		"when": `Expected a date-time string (RFC 3339), got "yesterday"`,
		"t.1":  `Expected a date-time string (RFC 3339), got "x"`,
		"blob": "Expected a base64-encoded string",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	res := s.Validate(map[string]any{"when": "2024-01-02T03:04:05Z", "blob": "YQ=="})
	if v, ok := res.Value.(*timedQuery); !ok || v.When.Year() != 2024 || string(v.Blob) != "a" {
		t.Errorf("valid: %+v", res)
	}
}

type openLine struct {
	SKU string `json:"sku" validate:"required"`
}

type closedLine struct {
	_   struct{} `additionalProperties:"false"`
	SKU string   `json:"sku" validate:"required"`
}

type closedOrder struct {
	_        struct{}     `additionalProperties:"false"`
	Customer string       `json:"customer" validate:"required"`
	Qty      int          `json:"qty" validate:"min=1"`
	Line     closedLine   `json:"line"`
	Open     openLine     `json:"open"`
	Lines    []closedLine `json:"lines"`
}

type openOrder struct {
	Customer string     `json:"customer" validate:"required"`
	Qty      int        `json:"qty" validate:"min=1"`
	Line     closedLine `json:"line"`
}

// TestUnknownKeys: a key naming no field is ignored (encoding/json's
// policy), unless the struct has the blank field
// `_ struct{} additionalProperties:"false"`: then each is the issue
// "Unknown key" at its path, with every type and rule issue of the rest,
// the same from the bytes (ValidateJSON, Decode) and from the tree
// (Validate); a closed struct nested in an open one is closed, and the
// reverse. The document says which: additionalProperties false, or
// nothing (JSON Schema's default: any key).
func TestUnknownKeys(t *testing.T) {
	open := validate.Struct[openOrder]()
	if got := issuesOf(open.ValidateJSON([]byte(`{"customer":"a","qty":1,"extra":1,"line":{"sku":"x"}}`))); len(got) != 0 {
		t.Errorf("open: %v", got)
	}
	if got := issuesOf(open.ValidateJSON([]byte(`{"customer":"a","qty":1,"line":{"sku":"x","more":2}}`))); got["line.more"] != "Unknown key" || len(got) != 1 {
		t.Errorf("open holding a closed struct: %v", got)
	}
	closed := validate.Struct[closedOrder]()
	for body, want := range map[string]map[string]string{
		`{"customer":"a","qty":1,"line":{"sku":"x"},"open":{"sku":"y","fine":1}}`:                                  {},
		`{"customer":"a","qty":1,"extra":1,"line":{"sku":"x","more":[2]}}`:                                         {"extra": "Unknown key", "line.more": "Unknown key", "open.sku": "Required"},
		`{"qty":0,"zzz":null,"line":{"sku":"x"},"open":{"sku":"y"}}`:                                               {"customer": "Required", "qty": "Must be at least 1", "zzz": "Unknown key"},
		`{"customer":"a","qty":"1","lines":[{"sku":"x"},{"sku":"y","n":1}],"line":{"sku":"x"},"open":{"sku":"y"}}`: {"qty": "Expected an integer, got a string", "lines.1.n": "Unknown key"},
	} {
		for name, r := range map[string]validate.Result{
			"ValidateJSON": closed.ValidateJSON([]byte(body)),
			"Validate":     closed.Validate(mustDecode(t, body)),
		} {
			if got := issuesOf(r); !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: %v, want %v", name, body, got, want)
			}
		}
		_, issues, err := closed.Decode([]byte(body), 0)
		if got := issuesOf(validate.Result{Issues: issues}); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Decode %s: %v %v, want %v", body, got, err, want)
		}
	}
	if got := closed.JSONSchema()["additionalProperties"]; got != false {
		t.Errorf("closed: additionalProperties %v, want false", got)
	}
	if got, has := open.JSONSchema()["additionalProperties"]; has {
		t.Errorf("open: additionalProperties %v, want none", got)
	}
}
