package jsonschema_test

import (
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/validate"
	"github.com/fxhq/fx/validate/adapters/jsonschema"
	"github.com/fxhq/fx/validate/validatetest"
)

const orderSchema = `{
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
					"qty": {"type": "integer", "minimum": 1}
				}
			}
		}
	}
}`

var builtinOrder = validate.Object(validate.Fields{
	"name": validate.String().MinLen(1),
	"items": validate.Array(validate.Object(validate.Fields{
		"sku": validate.String(),
		"qty": validate.Integer().Min(1),
	}).Strict()).MinItems(1),
})

func post(t testing.TB, body validate.Schema, payload string) (int, string) {
	t.Helper()
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Route(fx.Route{Method: "POST", Path: "/orders", Body: body,
		Handler: func(c *fx.Ctx) error { v, _ := fx.ValidBody[map[string]any](c); return c.JSON(201, v) }})
	r := fxtest.New(t, app).Post("/orders").Body("application/json", []byte(payload)).Do()
	return r.Status, string(r.Body)
}

func TestSameIssuesAsBuiltin(t *testing.T) {
	s := jsonschema.MustCompile(orderSchema)
	payload := `{"name":"","items":[{"sku":"a","qty":1},{"qty":0,"size":2,"color":"red"}]}`
	st1, want := post(t, builtinOrder, payload)
	st2, got := post(t, s, payload)
	if st1 != 422 || st2 != 422 || got != want {
		t.Errorf("built-in %d %s\njsonschema %d %s", st1, want, st2, got)
	}
	const wire = `{"error":{"code":"FX_VALIDATION_ERROR","message":"Request validation failed","details":{"issues":[` +
		`{"location":"body","path":["items","1","color"],"message":"Unknown key"},` +
		`{"location":"body","path":["items","1","qty"],"message":"Must be at least 1"},` +
		`{"location":"body","path":["items","1","size"],"message":"Unknown key"},` +
		`{"location":"body","path":["items","1","sku"],"message":"Required"},` +
		`{"location":"body","path":["name"],"message":"Must be at least 1 character long"}]}}}`
	if got != wire {
		t.Errorf("got  %s\nwant %s", got, wire)
	}
	if st, body := post(t, s, `{"name":"Ada","items":[{"sku":"a","qty":2}]}`); st != 201 || body != `{"items":[{"qty":2,"sku":"a"}],"name":"Ada"}` {
		t.Errorf("valid: %d %s", st, body)
	}
}

func TestMessages(t *testing.T) {
	s := jsonschema.MustCompile(`{"type":"object","properties":{
		"a":{"type":"string"},"b":{"enum":["x","y"]},"c":{"type":"number","maximum":2.5},
		"d":{"type":"array","maxItems":1},"e":{"type":"string","format":"email"},
		"f":{"type":"string","pattern":"^[a-z]+$"},"g":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`)
	res := s.Validate(map[string]any{"a": 1.0, "b": "z", "c": 3.0, "d": []any{1.0, 2.0}, "e": "nope", "f": "A1", "g": true})
	got := map[string]string{}
	for _, is := range res.Issues {
		got[strings.Join(is.Path, ".")] = is.Message
	}
	want := map[string]string{
		"a": "Expected a string, got a number", "b": `Must be one of: "x", "y"`, "c": "Must be at most 2.5",
		"d": "Must have at most 1 item", "e": "Must be a valid email address", "f": "Must match the pattern ^[a-z]+$",
		"g": "Does not match any of the allowed forms",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	// an empty body reaches the schema as nil; fx words the root issue
	if st, body := post(t, s, ""); st != 422 || !strings.Contains(body, `"path":[],"message":"Request body is required"`) {
		t.Errorf("empty: %d %s", st, body)
	}
}

func TestCompileError(t *testing.T) {
	if _, err := jsonschema.Compile(`{"type": 5}`); err == nil {
		t.Error("invalid schema compiled")
	}
	if _, err := jsonschema.Compile(`{`); err == nil {
		t.Error("non-JSON schema compiled")
	}
	var ie *validate.InternalError
	if !errors.As(validate.Fail(errors.New("x")).Err(), &ie) {
		t.Error("Fail")
	}
}

// TestQueryRepeatedKey: a repeated key reaches the schema as an array of
// strings, never as a Go type it cannot read.
func TestQueryRepeatedKey(t *testing.T) {
	s := jsonschema.MustCompile(`{"type":"object","properties":{
		"tag":{"type":"array","items":{"type":"string"},"maxItems":2},
		"q":{"type":"string"}}}`)
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Route(fx.Route{Method: "GET", Path: "/", Query: s,
		Handler: func(c *fx.Ctx) error { v, _ := fx.ValidQuery[map[string]any](c); return c.JSON(200, v) }})
	c := fxtest.New(t, app)
	for target, want := range map[string]string{
		"/?tag=a&tag=b": `{"tag":["a","b"]}`,
		"/?tag=a&tag=b&tag=c&q=x&q=y": `{"error":{"code":"FX_VALIDATION_ERROR","message":"Request validation failed","details":{"issues":[` +
			`{"location":"query","path":["q"],"message":"Expected a string, got an array"},` +
			`{"location":"query","path":["tag"],"message":"Must have at most 2 items"}]}}}`,
	} {
		if r := c.Get(target).Do(); string(r.Body) != want {
			t.Errorf("%s: %d %s\nwant %s", target, r.Status, r.Body, want)
		}
	}
}

func TestEnumOfObjectsIsJSON(t *testing.T) {
	s := jsonschema.MustCompile(`{"enum":[{"a":1},[1,2],null]}`)
	res := s.Validate("x")
	if len(res.Issues) != 1 || res.Issues[0].Message != `Must be one of: {"a":1}, [1,2], null` {
		t.Errorf("%+v", res.Issues)
	}
}

// TestLimit: at most max issues, the first ones of the library's error
// tree, and a 422 of MaxIssues issues with truncated through fx.
func TestLimit(t *testing.T) {
	s := jsonschema.MustCompile(orderSchema)
	flood := validatetest.HugeBody("name", "{}", 60_000) // about 20,000 empty items
	tree, _ := validate.DecodeJSON(flood)
	if res := s.ValidateLimit(tree, 7); len(res.Issues) != 7 {
		t.Errorf("%d issues, want 7", len(res.Issues))
	}
	var _ validate.Limited = s
	st, body := post(t, s, string(flood))
	if st != 422 || len(body) > 64<<10 || !strings.Contains(body, `"truncated":true`) {
		t.Errorf("%d, %d bytes: %.300s", st, len(body), body)
	}
}

// BenchmarkHugeInvalidBody is the 4 MiB attack body of fx's own
// BenchmarkHugeInvalidBody through this adapter: the pre-pass of
// bounded.go stops after 51 items (before it, the library validated all
// 1.4 million: 2 s and 604 MB an op).
func BenchmarkHugeInvalidBody(b *testing.B) {
	s := jsonschema.MustCompile(orderSchema)
	tree, _ := validate.DecodeJSON(validatetest.HugeBody("name", "{}", 4<<20))
	b.ReportAllocs()
	for b.Loop() {
		if res := s.ValidateLimit(tree, 101); len(res.Issues) != 101 {
			b.Fatal(len(res.Issues))
		}
	}
}

// BenchmarkHugeInvalidBodyBytes is the same attack body as fx hands it to
// the adapter, a validate.LimitedDecoder: the pre-pass walks the bytes
// and never builds the tree.
func BenchmarkHugeInvalidBodyBytes(b *testing.B) {
	s := jsonschema.MustCompile(orderSchema)
	body := validatetest.HugeBody("name", "{}", 4<<20)
	var _ validate.LimitedDecoder = s
	b.ReportAllocs()
	for b.Loop() {
		if res := s.ValidateJSONLimit(body, 101); len(res.Issues) != 101 {
			b.Fatal(len(res.Issues))
		}
	}
}
