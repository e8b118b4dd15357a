package validate_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/fxhq/fx/validate"
)

func issuesOf(r validate.Result) map[string]string {
	m := map[string]string{}
	for _, is := range r.Issues {
		m[strings.Join(is.Path, ".")] = is.Message
	}
	return m
}

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := validate.DecodeJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var orderSchema = validate.Object(validate.Fields{
	"name":  validate.String().MinLen(1).MaxLen(20),
	"kind":  validate.String().Enum("book", "pen").Default("book"),
	"code":  validate.String().Pattern(`^[A-Z]{3}$`, "Must be three capital letters").Optional(),
	"price": validate.Number().Min(0),
	"gift":  validate.Boolean().Optional(),
	"items": validate.Array(validate.Object(validate.Fields{
		"sku": validate.String(),
		"qty": validate.Integer().Min(1).Max(99),
	}).Strict()).MinItems(1),
	"note": validate.String().Nullable().Optional(),
	"even": validate.Integer().Check(func(f float64) error {
		if int(f)%2 != 0 {
			return errors.New("Must be an even number")
		}
		return nil
	}).Optional(),
})

func TestBuilderValid(t *testing.T) {
	res := orderSchema.Validate(mustDecode(t, `{"name":"Ada","price":2.5,"items":[{"sku":"A","qty":1e1}],"note":null,"extra":1}`))
	if len(res.Issues) > 0 {
		t.Fatalf("issues: %v", res.Issues)
	}
	want := map[string]any{"name": "Ada", "kind": "book", "price": 2.5,
		"items": []any{map[string]any{"sku": "A", "qty": 10.0}}, "note": nil}
	if !reflect.DeepEqual(res.Value, want) {
		t.Errorf("value %#v, want %#v (defaults filled, unknown keys dropped)", res.Value, want)
	}
}

func TestBuilderReportsEveryIssue(t *testing.T) {
	res := orderSchema.Validate(mustDecode(t,
		`{"name":"","kind":"car","code":"ab","price":"3","gift":1,"items":[{"sku":"A","qty":0},{"qty":1.5,"color":"red","size":2}],"even":3}`))
	want := map[string]string{
		"name":          "Must be at least 1 character long",
		"kind":          `Must be one of: "book", "pen"`,
		"code":          "Must be three capital letters",
		"price":         "Expected a number, got a string",
		"gift":          "Expected a boolean, got a number",
		"items.0.qty":   "Must be at least 1",
		"items.1.sku":   "Required",
		"items.1.qty":   "Expected an integer, got 1.5",
		"items.1.color": "Unknown key",
		"items.1.size":  "Unknown key",
		"even":          "Must be an even number",
	}
	if got := issuesOf(res); !reflect.DeepEqual(got, want) {
		t.Errorf("issues\n got %v\nwant %v", got, want)
	}
	for _, is := range res.Issues {
		for _, goType := range []string{"float64", "map[", "[]any", "int", "string)"} {
			if strings.Contains(is.Message, goType) && !strings.Contains(is.Message, "integer") {
				t.Errorf("message %q names a Go type", is.Message)
			}
		}
	}
}

func TestBuilderRootAndKinds(t *testing.T) {
	if got := issuesOf(orderSchema.Validate(nil)); got[""] != "Required" {
		t.Errorf("nil: %v", got)
	}
	if got := issuesOf(orderSchema.Validate([]any{})); got[""] != "Expected an object, got an array" {
		t.Errorf("array: %v", got)
	}
	if res := orderSchema.Optional().Validate(nil); len(res.Issues) != 0 || res.Value != nil {
		t.Errorf("optional nil: %+v", res)
	}
	if got := issuesOf(validate.Integer().Validate(1e300)); got[""] != "Must be at most 9007199254740992" {
		t.Errorf("huge integer: %v", got)
	}
	if got := issuesOf(validate.Array(validate.String()).MaxItems(1).Validate([]any{"a", "b"})); got[""] != "Must have at most 1 item" {
		t.Errorf("max items: %v", got)
	}
	if got := issuesOf(validate.String().MaxLen(2).Validate("ééé")); got[""] != "Must be at most 2 characters long" {
		t.Errorf("max len counts characters: %v", got)
	}
}

// TestIntegerRangeOneWording: an integer out of range is worded the same
// way by the builder (Integer, with or without Min and Max, in a body or
// a query) and by Struct and QueryStruct (a Go integer type's range):
// the bound it crossed, as the document gives it (rangeIssue); so is a
// number with a fraction (fractionIssue).
func TestIntegerRangeOneWording(t *testing.T) {
	type wide struct {
		N int64 `json:"n"`
	}
	type small struct {
		N int8 `json:"n"`
	}
	const above, below = "Must be at most 9007199254740992", "Must be at least -9007199254740992"
	query := func(n string) map[string]any { return map[string]any{"n": n} }
	for _, c := range []struct {
		name string
		r    validate.Result
		path string
		want string
	}{
		{"Integer", validate.Integer().Validate(1e16), "", above},
		{"Integer below", validate.Integer().Validate(-1e16), "", below},
		{"Integer with a wider Min", validate.Integer().Min(-1e300).Validate(-1e16), "", below},
		{"Integer with Max", validate.Integer().Max(100).Validate(1e300), "", "Must be at most 100"},
		{"Object", validate.Object(validate.Fields{"n": validate.Integer()}).Validate(map[string]any{"n": 1e16}), "n", above},
		{"Query", validate.Query(validate.Fields{"n": validate.Integer()}).Validate(query("1e16")), "n", above},
		{"Struct", validate.Struct[wide]().ValidateJSON([]byte(`{"n":1e16}`)), "n", above},
		{"Struct tree", validate.Struct[wide]().Validate(map[string]any{"n": -1e16}), "n", below},
		{"QueryStruct", validate.QueryStruct[wide]().Validate(query("1e16")), "n", above},
		{"Struct int8", validate.Struct[small]().ValidateJSON([]byte(`{"n":300}`)), "n", "Must be at most 127"},
		{"Integer as int8", validate.Integer().Min(-128).Max(127).Validate(300.0), "", "Must be at most 127"},
		{"QueryStruct int8", validate.QueryStruct[small]().Validate(query("-300")), "n", "Must be at least -128"},
		{"Integer fraction", validate.Integer().Validate(1.5), "", "Expected an integer, got 1.5"},
		{"Struct fraction", validate.Struct[small]().ValidateJSON([]byte(`{"n":1.5}`)), "n", "Expected an integer, got 1.5"},
		{"QueryStruct fraction", validate.QueryStruct[wide]().Validate(query("2.5")), "n", "Expected an integer, got 2.5"},
	} {
		if got := issuesOf(c.r); len(got) != 1 || got[c.path] != c.want {
			t.Errorf("%s: %v, want %s: %q", c.name, got, c.path, c.want)
		}
	}
	// the document gives the bounds the check applies
	if got := validate.Integer().Min(-1e300).JSONSchema()["minimum"]; got != -9007199254740992.0 {
		t.Errorf("Integer().Min(-1e300) documents minimum %v", got)
	}
}

func TestObjectCheckFieldError(t *testing.T) {
	s := validate.Object(validate.Fields{"from": validate.Integer(), "to": validate.Integer()}).
		Check(func(m map[string]any) error {
			if m["from"].(float64) > m["to"].(float64) {
				return &validate.FieldError{Field: []string{"to"}, Message: "Must not be before from"}
			}
			return nil
		})
	if got := issuesOf(s.Validate(map[string]any{"from": 5.0, "to": 1.0})); got["to"] != "Must not be before from" {
		t.Errorf("got %v", got)
	}
	// the check does not run when a field is invalid
	if got := issuesOf(s.Validate(map[string]any{"from": "x", "to": 1.0})); len(got) != 1 || got["from"] == "" {
		t.Errorf("got %v", got)
	}
}

// foreign is a Schema of another library nested in a builder object.
type foreign struct{}

func (foreign) Validate(v any) validate.Result {
	if v != "ok" {
		return validate.Result{Issues: []validate.Issue{{Path: []string{"inner"}, Message: "Not ok"}}}
	}
	return validate.Result{Value: "OK"}
}

func TestForeignFieldSchema(t *testing.T) {
	s := validate.Object(validate.Fields{"a": foreign{}, "b": foreign{}})
	res := s.Validate(map[string]any{"a": "ok", "b": 1.0})
	if got := issuesOf(res); !reflect.DeepEqual(got, map[string]string{"b.inner": "Not ok"}) {
		t.Errorf("got %v", got)
	}
	res = s.Validate(map[string]any{"a": "ok", "b": "ok"})
	if !reflect.DeepEqual(res.Value, map[string]any{"a": "OK", "b": "OK"}) {
		t.Errorf("value %v", res.Value)
	}
	failing := validate.Object(validate.Fields{"a": failSchema{}})
	if err := failing.Validate(map[string]any{"a": 1.0}).Err(); err == nil || !strings.Contains(err.Error(), "db down") {
		t.Errorf("internal failure not propagated: %v", err)
	}
}

type failSchema struct{}

func (failSchema) Validate(any) validate.Result { return validate.Fail(errors.New("db down")) }

func TestQueryCoercion(t *testing.T) {
	q := validate.Query(validate.Fields{
		"limit":  validate.Integer().Min(1).Max(100).Default(20),
		"offset": validate.Integer().Optional(),
		"price":  validate.Number().Optional(),
		"active": validate.Boolean().Optional(),
		"name":   validate.String().Optional(),
		"tag":    validate.Array(validate.String()).Optional(),
		"id":     validate.Array(validate.Integer()).Optional(),
	})
	res := q.Validate(map[string]any{"limit": "", "offset": "1e3", "price": "-2.5", "active": "true",
		"name": "", "tag": "x", "id": []string{"1", "2"}})
	if len(res.Issues) > 0 {
		t.Fatalf("issues %v", res.Issues)
	}
	want := map[string]any{"limit": 20.0, "offset": 1000.0, "price": -2.5, "active": true, "name": "",
		"tag": []any{"x"}, "id": []any{1.0, 2.0}}
	if !reflect.DeepEqual(res.Value, want) {
		t.Errorf("value %#v\nwant %#v", res.Value, want)
	}
	for in, msg := range map[string]string{
		"0x10": `Expected an integer, got "0x10"`,
		" 5":   `Expected an integer, got " 5"`,
		"+5":   `Expected an integer, got "+5"`,
		"05":   `Expected an integer, got "05"`,
		"NaN":  `Expected an integer, got "NaN"`,
		"Inf":  `Expected an integer, got "Inf"`,
		"1.5":  "Expected an integer, got 1.5",
		"1e9":  "Must be at most 100",
	} {
		if got := issuesOf(q.Validate(map[string]any{"limit": in})); got["limit"] != msg {
			t.Errorf("limit=%q: %v, want %q", in, got, msg)
		}
	}
	got := issuesOf(q.Validate(map[string]any{"offset": []string{"1", "2"}, "active": "yes", "id": []string{"1", "x"}}))
	want2 := map[string]string{"offset": "Expected a single value, got 2", "active": `Expected true or false, got "yes"`, "id.1": `Expected an integer, got "x"`}
	if !reflect.DeepEqual(got, want2) {
		t.Errorf("got %v\nwant %v", got, want2)
	}
	// the same strings are not coerced in a body object
	body := validate.Object(validate.Fields{"limit": validate.Integer()})
	if got := issuesOf(body.Validate(map[string]any{"limit": "5"})); got["limit"] != "Expected an integer, got a string" {
		t.Errorf("body coerced: %v", got)
	}
	if got := issuesOf(validate.Query(validate.Fields{"n": validate.Integer()}).Validate(map[string]any{"n": ""})); got["n"] != "Required" {
		t.Errorf("empty required: %v", got)
	}
}

// TestQueryBooleans: a query boolean is one of strconv.ParseBool's
// values, read alike by ParseBool, a Query object and a QueryStruct;
// anything else is the one issue.
func TestQueryBooleans(t *testing.T) {
	type flags struct {
		On bool `json:"on"`
	}
	q := validate.Query(validate.Fields{"on": validate.Boolean()})
	qs := validate.QueryStruct[flags]()
	for in, want := range map[string]bool{"1": true, "t": true, "T": true, "TRUE": true, "true": true, "True": true,
		"0": false, "f": false, "F": false, "FALSE": false, "false": false, "False": false} {
		if v, issue := validate.ParseBool(in); v != want || issue != "" {
			t.Errorf("ParseBool(%q) = %v, %q", in, v, issue)
		}
		if res := q.Validate(map[string]any{"on": in}); len(res.Issues) > 0 || res.Value.(map[string]any)["on"] != want {
			t.Errorf("Query on=%q: %+v", in, res)
		}
		if res := qs.Validate(map[string]any{"on": in}); len(res.Issues) > 0 || res.Value.(*flags).On != want {
			t.Errorf("QueryStruct on=%q: %+v", in, res)
		}
	}
	for _, in := range []string{"yes", "tRUE", "2", "on", " true", strings.Repeat("x", 50)} {
		msg := `Expected true or false, got "` + in + `"`
		if len(in) > 40 {
			msg = `Expected true or false, got "` + in[:40] + `…"`
		}
		if _, issue := validate.ParseBool(in); issue != msg {
			t.Errorf("ParseBool(%q) issue %q, want %q", in, issue, msg)
		}
		if got := issuesOf(q.Validate(map[string]any{"on": in})); got["on"] != msg {
			t.Errorf("Query on=%q: %v", in, got)
		}
		if got := issuesOf(qs.Validate(map[string]any{"on": in})); got["on"] != msg {
			t.Errorf("QueryStruct on=%q: %v", in, got)
		}
	}
}

func TestBuildersAreImmutable(t *testing.T) {
	base := validate.String()
	_ = base.MinLen(5)
	if res := base.Validate("ab"); len(res.Issues) != 0 {
		t.Errorf("MinLen changed its receiver: %v", res.Issues)
	}
}

// TestArrayDefaultNotShared: the default of an Array is a fresh slice in
// every output, so a handler that modifies it changes nothing for the next
// request, and neither does the caller's slice after Default.
func TestArrayDefaultNotShared(t *testing.T) {
	def := []any{"new"}
	s := validate.Query(validate.Fields{"tag": validate.Array(validate.String()).Default(def)})
	def[0] = "changed by the caller"
	first := s.Validate(map[string]any{}).Value.(map[string]any)["tag"].([]any)
	first[0] = "changed by a handler"
	second := s.Validate(map[string]any{}).Value.(map[string]any)["tag"].([]any)
	if len(second) != 1 || second[0] != "new" {
		t.Errorf("default is %v, want [new]", second)
	}
}
