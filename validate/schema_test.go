package validate_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx/validate"
)

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBuilderJSONSchema: every builder constraint has its 2020-12 keyword.
func TestBuilderJSONSchema(t *testing.T) {
	s := validate.Object(validate.Fields{
		"name":  validate.String().MinLen(1).MaxLen(10).Pattern(`^[a-z]+$`),
		"kind":  validate.String().Enum("a", "b").Optional(),
		"qty":   validate.Integer().Min(1).Max(99),
		"price": validate.Number().Nullable().Default(2.5),
		"tags":  validate.Array(validate.Boolean()).MinItems(1).MaxItems(3).Optional(),
		"n":     validate.Number().Enum(1, 2),
	}).Strict()
	want := `{"additionalProperties":false,"properties":{` +
		`"kind":{"enum":["a","b"],"type":"string"},` +
		`"n":{"enum":[1,2],"type":"number"},` +
		`"name":{"maxLength":10,"minLength":1,"pattern":"^[a-z]+$","type":"string"},` +
		`"price":{"default":2.5,"type":["number","null"]},` +
		`"qty":{"maximum":99,"minimum":1,"type":"integer"},` +
		`"tags":{"items":{"type":"boolean"},"maxItems":3,"minItems":1,"type":"array"}},` +
		`"required":["n","name","qty"],"type":"object"}`
	if got := jsonOf(t, s.JSONSchema()); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := jsonOf(t, validate.Integer().JSONSchema()); got != `{"maximum":9007199254740992,"minimum":-9007199254740992,"type":"integer"}` {
		t.Errorf("Integer: %s", got)
	}
	if _, ok := validate.JSONSchemaOf(opaque{}); ok {
		t.Error("a schema without JSONSchema described itself")
	}
}

type opaque struct{}

func (opaque) Validate(any) validate.Result { return validate.Result{} }

type node struct {
	Name     string          `json:"name"`
	At       time.Time       `json:"at"`
	Small    int8            `json:"small"`
	Count    uint16          `json:",omitempty"`
	Raw      []byte          `json:"raw"`
	Children []node          `json:"children"`
	Meta     map[string]bool `json:"meta"`
	Skip     string          `json:"-"`
	hidden   string
}

// TestStructJSONSchema: Struct describes a Go type by its JSON tags;
// recursion ends in {}; integers carry their format, slices, maps and
// []byte are not nullable (no pointer, no omitempty).
func TestStructJSONSchema(t *testing.T) {
	want := `{"properties":{"Count":{"format":"int32","maximum":65535,"minimum":0,"type":"integer"},` +
		`"at":{"format":"date-time","type":"string"},` +
		`"children":{"items":{},"type":"array"},` +
		`"meta":{"additionalProperties":{"type":"boolean"},"type":"object"},` +
		`"name":{"type":"string"},` +
		`"raw":{"contentEncoding":"base64","type":"string"},` +
		`"small":{"format":"int32","maximum":127,"minimum":-128,"type":"integer"}},"type":"object"}`
	if got := jsonOf(t, validate.Struct[node]().JSONSchema()); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Here []node is the outer type: its repetition is the field.
	// As a response (TypeJSONSchema), a nil slice or map is null.
	inner := strings.Replace(want, `"children":{"items":{},"type":"array"}`, `"children":{}`, 1)
	inner = strings.Replace(inner, `"type":"object"},"name"`, `"type":["object","null"]},"name"`, 1)
	inner = strings.Replace(inner, `"base64","type":"string"`, `"base64","type":["string","null"]`, 1)
	// As a response, every field c.JSON always sends (no omitempty, not
	// a pointer) is required: all but Count.
	inner = strings.Replace(inner, `},"type":"object"}`, `},"required":["name","at","small","raw","children","meta"],"type":"object"}`, 1)
	if got := jsonOf(t, validate.TypeJSONSchema(reflect.TypeFor[*[]node]())); got != `{"items":`+inner+`,"type":["array","null"]}` {
		t.Errorf("TypeJSONSchema(*[]node) = %s", got)
	}
	_ = node{}.hidden
}
