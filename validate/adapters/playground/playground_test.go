package playground_test

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/validate"
	"github.com/fxhq/fx/validate/adapters/playground"
	"github.com/fxhq/fx/validate/validatetest"
)

type Item struct {
	SKU string `json:"sku" validate:"required"`
	Qty int    `json:"qty" validate:"min=1"`
}

type Order struct {
	Name  string `json:"name" validate:"min=1"`
	Items []Item `json:"items" validate:"min=1,dive"`
}

// builtinOrder is the same contract in the built-in schema.
var builtinOrder = validate.Object(validate.Fields{
	"name": validate.String().MinLen(1),
	"items": validate.Array(validate.Object(validate.Fields{
		"sku": validate.String(),
		"qty": validate.Integer().Min(1),
	})).MinItems(1),
})

func newApp(body, query validate.Schema) *fx.App {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Route(fx.Route{Method: "POST", Path: "/orders", Body: body, Query: query,
		Handler: func(c *fx.Ctx) error {
			if o, ok := fx.ValidBody[Order](c); ok {
				return c.JSON(201, o)
			}
			return c.JSON(201, "map")
		}})
	return app
}

func post(t testing.TB, app *fx.App, target, body string) (int, string) {
	t.Helper()
	r := fxtest.New(t, app).Post(target).Body("application/json", []byte(body)).Do()
	return r.Status, string(r.Body)
}

func TestSameIssuesAsBuiltin(t *testing.T) {
	payload := `{"name":"","items":[{"sku":"a","qty":1},{"qty":0}]}`
	st1, want := post(t, newApp(builtinOrder, nil), "/orders", payload)
	st2, got := post(t, newApp(playground.Struct[Order](nil), nil), "/orders", payload)
	if st1 != 422 || st2 != 422 || got != want {
		t.Errorf("built-in %d %s\nplayground %d %s", st1, want, st2, got)
	}
	const wire = `{"error":{"code":"FX_VALIDATION_ERROR","message":"Request validation failed","details":{"issues":[` +
		`{"location":"body","path":["items","1","qty"],"message":"Must be at least 1"},` +
		`{"location":"body","path":["items","1","sku"],"message":"Required"},` +
		`{"location":"body","path":["name"],"message":"Must be at least 1 character long"}]}}}`
	if got != wire {
		t.Errorf("got  %s\nwant %s", got, wire)
	}
	st, body := post(t, newApp(playground.Struct[Order](nil), nil), "/orders", `{"name":"Ada","items":[{"sku":"a","qty":2}]}`)
	if st != 201 || body != `{"name":"Ada","items":[{"sku":"a","qty":2}]}` {
		t.Errorf("valid: %d %s", st, body)
	}
}

type Inner struct {
	Code string `json:"code" validate:"len=3"`
}

type Base struct {
	Email string `json:"email" validate:"required,email"`
}

type Profile struct {
	Base
	DisplayName string            `json:"display_name" validate:"required"`
	Tags        []string          `json:"tags" validate:"max=2,dive,oneof=red green"`
	Labels      map[string]string `json:"labels" validate:"dive,keys,min=1,endkeys,max=3"`
	Inner       *Inner            `json:"inner" validate:"required"`
	Age         int               `json:"age" validate:"gte=18,lte=130"`
	NoTag       string            `validate:"alpha"`
}

func TestPathsAndMessages(t *testing.T) {
	s := playground.Struct[Profile](nil)
	body := `{"email":"nope","display_name":"","tags":["red","blue","green"],"labels":{"a.b":"long!"},"inner":{"code":"ab"},"age":12,"NoTag":"x1"}`
	res := s.ValidateJSON([]byte(body))
	got := map[string]string{}
	for _, is := range res.Issues {
		got[strings.Join(is.Path, "|")] = is.Message
	}
	want := map[string]string{
		"email":        "Must be a valid email address",
		"display_name": "Required",
		"tags":         "Must have at most 2 items",
		"labels|a.b":   "Must be at most 3 characters long",
		"inner|code":   "Must be exactly 3 characters long",
		"age":          "Must be at least 18",
		"NoTag":        "Must contain only letters",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	// elements: index as its own segment
	res = s.ValidateJSON([]byte(`{"email":"a@b.co","display_name":"x","tags":["red","blue"],"inner":{"code":"abc"},"age":20,"NoTag":"x"}`))
	if len(res.Issues) != 1 || !reflect.DeepEqual(res.Issues[0].Path, []string{"tags", "1"}) || res.Issues[0].Message != `Must be one of: "red", "green"` {
		t.Errorf("got %+v", res.Issues)
	}
	// the type error of every mistyped field, and the tags of the fields
	// that decoded (as the builder reports them); no tag issue at or below
	// a mistyped field
	res = s.ValidateJSON([]byte(`{"email":1,"age":"x","tags":[1]}`))
	got = map[string]string{}
	for _, is := range res.Issues {
		got[strings.Join(is.Path, "|")] = is.Message
	}
	if !reflect.DeepEqual(got, map[string]string{"email": "Expected a string, got a number", "age": "Expected an integer, got a string", "tags|0": "Expected a string, got a number",
		"display_name": "Required", "inner": "Required", "NoTag": "Must contain only letters"}) {
		t.Errorf("type errors: %v", got)
	}
	// no Go field or type names in messages
	for _, is := range res.Issues {
		if strings.Contains(is.Message, "Profile") || strings.Contains(is.Message, "int") && !strings.Contains(is.Message, "integer") {
			t.Errorf("leaky message %q", is.Message)
		}
	}
}

type List struct {
	Limit int      `json:"limit" validate:"min=1,max=100"`
	Tag   []string `json:"tag" validate:"dive,min=2"`
}

func TestQuery(t *testing.T) {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Route(fx.Route{Method: "GET", Path: "/l", Query: playground.Query[List](nil),
		Handler: func(c *fx.Ctx) error { q, _ := fx.ValidQuery[List](c); return c.JSON(200, q) }})
	r := fxtest.New(t, app).Get("/l?limit=500&tag=ab&tag=c").Do()
	is := r.Envelope().Issues
	if r.Status != 422 || len(is) != 2 || is[0].Location != "query" || is[0].Path != "limit" ||
		is[1].Path != "tag.1" || is[1].Message != "Must be at least 2 characters long" {
		t.Errorf("%d %s", r.Status, r.Body)
	}
}

// benchmark: the request goes through the booted handler, without a network.
func benchContract(b *testing.B, body validate.Schema, payload string, status int) {
	app := newApp(body, nil)
	if err := app.Boot(); err != nil {
		b.Fatal(err)
	}
	kittest.BenchPost(b, app.Handler(), "/orders", payload, status)
}

const (
	validOrder   = `{"name":"Ada","items":[{"sku":"a","qty":1},{"sku":"b","qty":2}]}`
	invalidOrder = `{"name":"","items":[{"sku":"a","qty":1},{"qty":0}]}`
)

func BenchmarkContract(b *testing.B) {
	b.Run("playground/valid", func(b *testing.B) { benchContract(b, playground.Struct[Order](nil), validOrder, 201) })
	b.Run("playground/invalid", func(b *testing.B) { benchContract(b, playground.Struct[Order](nil), invalidOrder, 422) })
}

type Signup struct {
	Password string      `json:"password"`
	Confirm  string      `json:"password_confirm" validate:"eqfield=Password"`
	Inner    SignupInner `json:"inner"`
	MinAge   int         `json:"min_age"`
}

type SignupInner struct {
	Age int `json:"age" validate:"gtecsfield=MinAge"`
}

// TestFieldComparisonNamesJSONField: eqfield=Password is reported with the
// JSON name of the other field, never its Go name.
func TestFieldComparisonNamesJSONField(t *testing.T) {
	res := playground.Struct[Signup](nil).ValidateJSON([]byte(`{"password":"a","password_confirm":"b","inner":{"age":1},"min_age":18}`))
	got := map[string]string{}
	for _, is := range res.Issues {
		got[strings.Join(is.Path, "|")] = is.Message
	}
	want := map[string]string{"password_confirm": "Must equal password", "inner|age": "Must be at least min_age"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// TestSameIssuesAsBuiltinMixed: a payload mixing type errors and rule
// failures gives, through the adapter, the builder's response byte for
// byte: the type error of each mistyped field and the rule failures of
// every field that decoded.
func TestSameIssuesAsBuiltinMixed(t *testing.T) {
	for _, payload := range []string{
		`{"name":"","items":[{"sku":5,"qty":0},3,{"qty":"x"},{"sku":"a","qty":1}]}`,
		`{"name":7,"items":[{"qty":0}]}`,
		`{"name":"","items":{}}`,
		`{"name":"x","items":[]}`,
		`[1]`,
	} {
		st1, want := post(t, newApp(builtinOrder, nil), "/orders", payload)
		st2, got := post(t, newApp(playground.Struct[Order](nil), nil), "/orders", payload)
		if st1 != 422 || st2 != 422 || got != want {
			t.Errorf("%s\n built-in   %d %s\n playground %d %s", payload, st1, want, st2, got)
		}
	}
}

// TestLimit: the adapter stops at the limit on both paths, and a mistyped
// value is not changed by the tag check (it gets a copy).
func TestLimit(t *testing.T) {
	s := playground.Struct[Order](nil)
	flood := validatetest.HugeBody("name", `{"sku":1}`, 1_000_000) // about 100,000 mistyped items
	if res := s.ValidateJSONLimit(flood, 10); len(res.Issues) != 10 {
		t.Errorf("bytes: %d issues, want 10", len(res.Issues))
	}
	tree, _ := validate.DecodeJSON([]byte(`{"name":"","items":[{"sku":1},{"qty":0}]}`))
	res := s.ValidateLimit(tree, 2)
	if len(res.Issues) != 2 {
		t.Errorf("tree: %d issues, want 2: %v", len(res.Issues), res.Issues)
	}
	res = s.Validate(tree)
	if len(res.Issues) != 5 {
		t.Errorf("tree: %v", res.Issues)
	}
	if tree.(map[string]any)["items"].([]any)[0].(map[string]any)["sku"] != 1.0 {
		t.Error("the caller's value was changed")
	}
	var _ validate.Limited = s
	var _ validate.LimitedDecoder = s
}

// BenchmarkHugeInvalidBody is the 4 MiB attack body of fx's own
// BenchmarkHugeInvalidBody through this adapter, once type-valid (1.4
// million empty items) and once mistyped (2 million numbers): both stop
// at the limit in the pre-pass of bounded.go.
func BenchmarkHugeInvalidBody(b *testing.B) {
	for _, c := range []struct{ name, item string }{{"empty-items", `{}`}, {"mistyped-items", `1`}} {
		b.Run(c.name, func(b *testing.B) {
			body := validatetest.HugeBody("name", c.item, 4<<20)
			s := playground.Struct[Order](nil)
			b.ReportAllocs()
			for b.Loop() {
				if res := s.ValidateJSONLimit(body, 101); len(res.Issues) != 101 {
					b.Fatal(len(res.Issues))
				}
			}
		})
	}
}

// TestGrammarChecker: the adapter checks the grammar itself, so fx hands
// it the body as it came: every malformed body gets CheckJSON's one
// issue, the large ones on the bounded pre-pass's path too (it checks
// the grammar before it scans); and a body is checked once, by
// validate.Struct's pass (with a limit too high for the pre-pass: a body
// large enough for it is checked before it and by the pass, as it was by
// fx and the pass before).
func TestGrammarChecker(t *testing.T) {
	s := playground.Struct[Order](nil)
	if err := validatetest.CheckGrammar(s, validatetest.MalformedBodies()...); err != nil {
		t.Error(err)
	}
	body := validatetest.ManyKeysBody(`"name":"x","items":[{"sku":"a","qty":1}]`, 330_000)
	alone, behind, check := kittest.GrammarChecks(t, fx.Config{MaxIssues: 1 << 20}, s, body)
	if alone > check*3/2 {
		t.Errorf("serving allocated %d bytes, over one grammar check (%d) and a half: checked twice", alone, check)
	}
	if behind < alone+check/2 {
		t.Errorf("behind fx's check, serving allocated %d bytes, alone %d: the check of fx is not counted (one is %d)", behind, alone, check)
	}
}
