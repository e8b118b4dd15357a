package jsonschema_test

import (
	"encoding/json"
	"testing"

	"github.com/fxhq/fx/validate"
	"github.com/fxhq/fx/validate/adapters/jsonschema"
)

// TestJSONSchemaIsTheDocument: the adapter describes itself with its own
// document, verbatim.
func TestJSONSchemaIsTheDocument(t *testing.T) {
	src := `{"type":"object","required":["email"],"properties":{"email":{"type":"string","format":"email"}},"$defs":{"x":{"minimum":1}}}`
	s := jsonschema.MustCompile(src)
	got, ok := validate.JSONSchemaOf(s)
	if !ok {
		t.Fatal("not a validate.Describer")
	}
	var want map[string]any
	json.Unmarshal([]byte(src), &want)
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	if string(a) != string(b) {
		t.Errorf("got %s\nwant %s", a, b)
	}
	if m, _ := validate.JSONSchemaOf(jsonschema.MustCompile(`false`)); m["not"] == nil {
		t.Errorf("false schema described as %v", m)
	}
}
