package conformance

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"reflect"
	"testing"

	yaml "github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// TestYAMLDocument: /openapi.yaml, read by an independent YAML parser, is
// the JSON document value for value, and is valid OpenAPI 3.1 too.
func TestYAMLDocument(t *testing.T) {
	app := exampleApp(t)
	read := func(target string) []byte {
		resp, err := app.Test(httptest.NewRequest("GET", target, nil))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", target, resp.StatusCode)
		}
		return b
	}
	jsonDoc, yamlDoc := read("/openapi.json"), read("/openapi.yaml")
	var fromJSON, fromYAML any
	if err := json.Unmarshal(jsonDoc, &fromJSON); err != nil {
		t.Fatal(err)
	}
	var y any
	if err := yaml.Unmarshal(yamlDoc, &y); err != nil {
		t.Fatal(err)
	}
	// Through JSON again, so that YAML's integers compare as JSON numbers.
	b, err := json.Marshal(y)
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b, &fromYAML)
	if !reflect.DeepEqual(fromJSON, fromYAML) {
		t.Errorf("the YAML document differs from the JSON one:\n%s", yamlDoc)
	}
	doc, err := libopenapi.NewDocument(yamlDoc)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("%s: %s", e.Message, e.Reason)
		}
	}
}
