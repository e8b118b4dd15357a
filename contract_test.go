package fx_test

import (
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/validate"
	"github.com/valyala/fasthttp"
)

// contractDo sends a request through app.Test (do); ctype "" sends no
// Content-Type.
func contractDo(t testing.TB, app *fx.App, method, target, ctype, body string) (int, string) {
	t.Helper()
	var hdr []string
	if ctype != "" {
		hdr = []string{"Content-Type", ctype}
	}
	r := do(t, app, method, target, body, hdr...)
	return r.status, string(r.body)
}

type contractIssue struct {
	Location string   `json:"location"`
	Path     []string `json:"path"`
	Message  string   `json:"message"`
}

// contractIssues parses a 422 envelope strictly and returns its issues.
func contractIssues(t testing.TB, status int, body string) []contractIssue {
	t.Helper()
	var env struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Details struct {
				Issues []contractIssue `json:"issues"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, body)
	}
	if status != 422 || env.Error.Code != "FX_VALIDATION_ERROR" || env.Error.Message != "Request validation failed" {
		t.Fatalf("want 422 FX_VALIDATION_ERROR, got %d %s", status, body)
	}
	for _, is := range env.Error.Details.Issues {
		if is.Path == nil {
			t.Fatalf("issue path is null: %s", body)
		}
	}
	return env.Error.Details.Issues
}

var contractOrder = validate.Object(validate.Fields{
	"name": validate.String().MinLen(1),
	"items": validate.Array(validate.Object(validate.Fields{
		"sku": validate.String(),
		"qty": validate.Integer().Min(1),
	})).MinItems(1),
})

var contractList = validate.Query(validate.Fields{
	"limit": validate.Integer().Min(1).Max(100).Default(20),
	"sort":  validate.String().Enum("asc", "desc").Optional(),
})

func TestContractOne422BodyThenQuerySorted(t *testing.T) {
	app := quiet()
	ran := false
	app.Route(fx.Route{Method: "POST", Path: "/orders", Body: contractOrder, Query: contractList,
		Handler: func(c *fx.Ctx) error { ran = true; return nil }})
	st, body := contractDo(t, app, "POST", "/orders?sort=up&limit=0", "application/json",
		`{"name":"","items":[{"sku":"a","qty":1},{"sku":"b","qty":0},{"sku":"c","qty":1},{"sku":"d","qty":1},{"sku":"e","qty":1},{"sku":"f","qty":1},{"sku":"g","qty":1},{"sku":"h","qty":1},{"sku":"i","qty":1},{"sku":"j","qty":1},{"qty":0}]}`)
	got := contractIssues(t, st, body)
	want := []contractIssue{
		{"body", []string{"items", "1", "qty"}, "Must be at least 1"},
		{"body", []string{"items", "10", "qty"}, "Must be at least 1"},
		{"body", []string{"items", "10", "sku"}, "Required"},
		{"body", []string{"name"}, "Must be at least 1 character long"},
		{"query", []string{"limit"}, "Must be at least 1"},
		{"query", []string{"sort"}, `Must be one of: "asc", "desc"`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("issues\n got %+v\nwant %+v", got, want)
	}
	if ran {
		t.Error("handler ran despite issues")
	}
	// a broken body does not hide query issues
	st, body = contractDo(t, app, "POST", "/orders?limit=x", "application/json", `{"name":`)
	got = contractIssues(t, st, body)
	if len(got) != 2 || got[0].Location != "body" || got[1].Location != "query" || got[1].Message != `Expected an integer, got "x"` {
		t.Errorf("got %+v", got)
	}
}

type contractItem struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

type contractOrderT struct {
	Name  string         `json:"name"`
	Items []contractItem `json:"items"`
}

type contractListT struct {
	Limit int    `json:"limit"`
	Sort  string `json:"sort"`
}

func TestContractTypedAccess(t *testing.T) {
	app := quiet()
	app.Route(fx.Route{Method: "POST", Path: "/typed", Body: validate.Struct[contractOrderT](), Query: validate.QueryStruct[contractListT](),
		Handler: func(c *fx.Ctx) error {
			o, ok := fx.ValidBody[contractOrderT](c)
			p, okp := fx.ValidBody[*contractOrderT](c)
			q, okq := fx.ValidQuery[contractListT](c)
			_, bad := fx.ValidBody[string](c)
			if !ok || !okp || !okq || bad || p.Name != o.Name {
				return errors.New("accessor failed")
			}
			return c.JSON(200, map[string]any{"name": o.Name, "qty": o.Items[1].Qty, "limit": q.Limit, "sort": q.Sort})
		}})
	app.Route(fx.Route{Method: "POST", Path: "/map", Body: contractOrder, Query: contractList,
		Handler: func(c *fx.Ctx) error {
			o, _ := fx.ValidBody[map[string]any](c)
			q, _ := fx.ValidQuery[map[string]any](c)
			return c.JSON(200, map[string]any{"name": o["name"], "limit": q["limit"]})
		}})
	st, body := contractDo(t, app, "POST", "/typed?limit=5&sort=asc", "application/json; charset=utf-8",
		`{"name":"Ada","items":[{"sku":"a","qty":1},{"sku":"b","qty":7}]}`)
	if st != 200 || body != `{"limit":5,"name":"Ada","qty":7,"sort":"asc"}` {
		t.Errorf("typed: %d %s", st, body)
	}
	st, body = contractDo(t, app, "POST", "/map", "", `{"name":"Ada","items":[{"sku":"a","qty":1}]}`)
	if st != 200 || body != `{"limit":20,"name":"Ada"}` {
		t.Errorf("map: %d %s", st, body)
	}
	// Struct reports every field type error of the body together
	st, body = contractDo(t, app, "POST", "/typed?limit=1.5", "application/json", `{"name":1,"items":[{"sku":2,"qty":"3"}]}`)
	got := contractIssues(t, st, body)
	want := []contractIssue{
		{"body", []string{"items", "0", "qty"}, "Expected an integer, got a string"},
		{"body", []string{"items", "0", "sku"}, "Expected a string, got a number"},
		{"body", []string{"name"}, "Expected a string, got a number"},
		{"query", []string{"limit"}, "Expected an integer, got 1.5"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("issues\n got %+v\nwant %+v", got, want)
	}
}

// ptrSchema returns a pointer the handler must receive as is.
type ptrSchema struct{ out *contractOrderT }

func (s ptrSchema) Validate(any) validate.Result { return validate.Result{Value: s.out} }

func TestContractNoSecondDecode(t *testing.T) {
	out := &contractOrderT{Name: "from schema"}
	app := quiet()
	app.Route(fx.Route{Method: "POST", Path: "/", Body: ptrSchema{out},
		Handler: func(c *fx.Ctx) error {
			p, _ := fx.ValidBody[*contractOrderT](c)
			if p != out {
				return errors.New("not the schema's value")
			}
			return c.JSON(200, p.Name)
		}})
	if st, body := contractDo(t, app, "POST", "/", "", `{"name":"from wire"}`); st != 200 || body != `"from schema"` {
		t.Errorf("%d %s", st, body)
	}
}

// countingSchema is a Decoder that records which path fx took.
type countingSchema struct {
	validate.Schema
	fast, slow *int
}

func (s countingSchema) Validate(v any) validate.Result { *s.slow++; return s.Schema.Validate(v) }
func (s countingSchema) ValidateJSON(b []byte) validate.Result {
	*s.fast++
	return s.Schema.(validate.Decoder).ValidateJSON(b)
}

// TestMalformedBodiesSameOnBothPaths: a body refused by the grammar gets
// the same one issue whether fx checks it (a Decoder that does not check
// the grammar: countingSchema) or the schema does (Object, Struct:
// validate.GrammarCheckers).
func TestMalformedBodiesSameOnBothPaths(t *testing.T) {
	var fast, slow int
	type named struct {
		Name string `json:"name"`
	}
	generic := quiet()
	generic.Route(fx.Route{Method: "POST", Path: "/", Body: validate.Object(validate.Fields{"name": validate.String()}),
		Handler: func(c *fx.Ctx) error { return c.NoContent(204) }})
	decoder := quiet()
	decoder.Route(fx.Route{Method: "POST", Path: "/", Body: countingSchema{validate.Struct[named](), &fast, &slow},
		Handler: func(c *fx.Ctx) error { return c.NoContent(204) }})
	typed := quiet()
	typed.Route(fx.Route{Method: "POST", Path: "/", Body: validate.Struct[named](),
		Handler: func(c *fx.Ctx) error { return c.NoContent(204) }})

	for _, tc := range []struct {
		name, ctype, body string
		want              contractIssue
	}{
		{"not json", "application/json", `name=ada`, contractIssue{"body", []string{}, "Not valid JSON: unexpected word at byte 0"}},
		{"not json either", "application/json", `<xml/>`, contractIssue{"body", []string{}, "Not valid JSON: unexpected character '<' at byte 0 (expected a value)"}},
		{"trailing garbage", "application/json", `{"name":"a"} x`, contractIssue{"body", []string{}, "Not valid JSON: unexpected data after the JSON value at byte 13"}},
		{"two values", "application/json", `{"name":"a"}{"name":"b"}`, contractIssue{"body", []string{}, "Not valid JSON: unexpected data after the JSON value at byte 12"}},
		{"truncated", "application/json", `{"name":"a"`, contractIssue{"body", []string{}, "Not valid JSON: unexpected end of input"}},
		{"form content type", "application/x-www-form-urlencoded", `{"name":"a"}`, contractIssue{"body", []string{}, "Content-Type must be application/json"}},
		{"text content type", "text/plain", `{"name":"a"}`, contractIssue{"body", []string{}, "Content-Type must be application/json"}},
		{"empty body", "application/json", ``, contractIssue{"body", []string{}, "Request body is required"}},
		{"blank body", "application/json", "  \n", contractIssue{"body", []string{}, "Request body is required"}},
		{"null body", "application/json", `null`, contractIssue{"body", []string{}, "Required"}},
		{"duplicate key", "application/json", `{"name":"a","name":"b"}`, contractIssue{"body", []string{"name"}, `Duplicate key "name"`}},
		{"escaped duplicate key", "application/json", `{"name":"a","n\u0061me":"b"}`, contractIssue{"body", []string{"name"}, `Duplicate key "name"`}},
		{"invalid utf-8", "application/json", "{\"name\":\"\xff\"}", contractIssue{"body", []string{}, "Not valid JSON: invalid UTF-8 at byte 9"}},
		{"wrong kind", "application/json", `[]`, contractIssue{"body", []string{}, "Expected an object, got an array"}},
		{"number too large", "application/json", `{"name":1e400}`, contractIssue{"body", []string{"name"}, "Number is too large"}},
		{"number too large, then bad syntax", "application/json", `{"name":1e400,"b":}`, contractIssue{"body", []string{"name"}, "Number is too large"}},
		{"null after a vertical tab", "application/json", "\vnull", contractIssue{"body", []string{}, "Not valid JSON: expected a value at byte 0"}},
		{"null after a no-break space", "application/json", "\u00a0null", contractIssue{"body", []string{}, "Not valid JSON: expected a value at byte 0"}},
		{"null, then more", "application/json", `null 1`, contractIssue{"body", []string{}, "Not valid JSON: unexpected data after the JSON value at byte 5"}},
	} {
		var bodies [3]string
		for i, app := range []*fx.App{generic, decoder, typed} {
			st, body := contractDo(t, app, "POST", "/", tc.ctype, tc.body)
			got := contractIssues(t, st, body)
			if len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
				t.Errorf("%s (app %d): got %+v, want %+v", tc.name, i, got, tc.want)
			}
			bodies[i] = body
		}
		if bodies[0] != bodies[1] || bodies[1] != bodies[2] {
			t.Errorf("%s: wire differs between paths:\n%s\n%s\n%s", tc.name, bodies[0], bodies[1], bodies[2])
		}
	}
	if fast == 0 {
		t.Error("the Decoder fast path was never used")
	}
	// an optional body accepts an empty request
	app := quiet()
	app.Route(fx.Route{Method: "POST", Path: "/", Body: validate.Object(nil).Optional(),
		Handler: func(c *fx.Ctx) error { _, ok := fx.ValidBody[map[string]any](c); return c.JSON(200, ok) }})
	if st, body := contractDo(t, app, "POST", "/", "text/plain", ""); st != 200 || body != "false" {
		t.Errorf("optional empty body: %d %s", st, body)
	}
}

// TestBodyGrammarCheckedOnce: a route whose body schema checks the
// grammar itself (validate.GrammarChecker) has its body checked once, by
// the schema, not by fx first. Counted by what a check of the grammar
// allocates on a body of 330,000 keys (30,000 without FX_SLOW_TESTS; the
// duplicate check's key set, 8 MB or 0.7 MB, is most of what serving it
// allocates): serving costs about one such check with the schema alone,
// one more when fx checks first (the schema behind kittest.Unchecked).
func TestBodyGrammarCheckedOnce(t *testing.T) {
	keys := 330_000
	if os.Getenv("FX_SLOW_TESTS") == "" {
		keys = 30_000
	}
	body := unknownKeysBody(keys)
	for name, s := range map[string]validate.LimitedDecoder{
		"struct":  validate.Struct[boundedOrderT](),
		"builder": boundedOrder,
		"array":   validate.Array(validate.Integer()),
	} {
		alone, behind, check := kittest.GrammarChecks(t, fx.Config{}, s, body)
		if alone > check*3/2 {
			t.Errorf("%s: serving allocated %d bytes, over one grammar check (%d) and a half: checked twice", name, alone, check)
		}
		if behind < alone+check/2 {
			t.Errorf("%s: behind fx's check, serving allocated %d bytes, alone %d: the check of fx is not counted (one is %d)", name, behind, alone, check)
		}
	}
}

func TestQueryEdgeCases(t *testing.T) {
	app := quiet()
	app.Route(fx.Route{Method: "GET", Path: "/list", Query: validate.Query(validate.Fields{
		"limit": validate.Integer().Min(1).Default(20),
		"tag":   validate.Array(validate.String()).Optional(),
	}).Strict(), Handler: func(c *fx.Ctx) error {
		q, _ := fx.ValidQuery[map[string]any](c)
		return c.JSON(200, q)
	}})
	for target, want := range map[string]string{
		"/list":                 `{"limit":20}`,
		"/list?limit=":          `{"limit":20}`,
		"/list?limit=1e3":       `{"limit":1000}`,
		"/list?tag=a&tag=b%20c": `{"limit":20,"tag":["a","b c"]}`,
	} {
		if st, body := contractDo(t, app, "GET", target, "", ""); st != 200 || body != want {
			t.Errorf("%s: %d %s, want %s", target, st, body, want)
		}
	}
	for target, msg := range map[string]string{
		"/list?limit=0x10":    `Expected an integer, got "0x10"`,
		"/list?limit=%205":    `Expected an integer, got " 5"`,
		"/list?limit=+5":      `Expected an integer, got " 5"`,
		"/list?limit=NaN":     `Expected an integer, got "NaN"`,
		"/list?limit=1&limit": "Expected a single value, got 2",
		"/list?limit=1&lim=2": "Unknown key",
	} {
		st, body := contractDo(t, app, "GET", target, "", "")
		got := contractIssues(t, st, body)
		if len(got) != 1 || got[0].Location != "query" || got[0].Message != msg {
			t.Errorf("%s: got %+v, want %q", target, got, msg)
		}
	}
}

// twoRootIssuesSchema reports two issues at the root, as a JSON Schema with
// allOf of two object schemas does for an empty body.
type twoRootIssuesSchema struct{}

func (twoRootIssuesSchema) Validate(v any) validate.Result {
	if v != nil {
		return validate.Result{Value: v}
	}
	return validate.Result{Issues: []validate.Issue{{Message: "Expected an object"}, {Message: "Expected an object, got null"}}}
}

func TestEmptyBodyOneRootIssue(t *testing.T) {
	app := quiet()
	app.Route(fx.Route{Method: "POST", Path: "/", Body: twoRootIssuesSchema{}, Query: contractList,
		Handler: func(c *fx.Ctx) error { return c.NoContent(204) }})
	st, body := contractDo(t, app, "POST", "/?limit=0", "", "")
	got := contractIssues(t, st, body)
	want := []contractIssue{{"body", []string{}, "Request body is required"}, {"query", []string{"limit"}, "Must be at least 1"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

type panickingSchema struct{}

func (panickingSchema) Validate(any) validate.Result { panic("schema bug") }

type panickingFastSchema struct{ panickingSchema }

func (panickingFastSchema) ValidateJSON([]byte) validate.Result { panic("schema bug") }

type failingSchema struct{}

func (failingSchema) Validate(any) validate.Result {
	return validate.Fail(errors.New("rules store down"))
}

func TestSchemaFailureIs500(t *testing.T) {
	for name, r := range map[string]fx.Route{
		"body panics":      {Body: panickingSchema{}},
		"decoder panics":   {Body: panickingFastSchema{}},
		"query panics":     {Query: panickingSchema{}},
		"body fails":       {Body: failingSchema{}},
		"query fails":      {Query: failingSchema{}},
		"nested fails":     {Body: validate.Object(validate.Fields{"a": failingSchema{}})},
		"fails with issue": {Body: contractOrder, Query: failingSchema{}},
	} {
		app := quiet()
		r.Method, r.Path = "POST", "/"
		r.Handler = func(c *fx.Ctx) error { return c.NoContent(204) }
		app.Route(r)
		st, body := contractDo(t, app, "POST", "/?a=1", "application/json", `{"a":1}`)
		if st != 500 || body != `{"error":{"code":"FX_INTERNAL_ERROR","message":"Internal server error"}}` {
			t.Errorf("%s: %d %s", name, st, body)
		}
	}
}

// FuzzContract: arbitrary body and query bytes against a route contract
// never give a 5xx or a body that is not JSON.
func FuzzContract(f *testing.F) {
	for _, s := range [][2]string{
		{`{"name":"a","items":[{"sku":"x","qty":1}]}`, "limit=5&sort=asc"},
		{`{"name":"a","name":"b"}`, "limit=&limit=1e3"},
		{`{"items":[{"qty":1.5},{"sku":null}]} x`, "limit=0x10&sort=%ff"},
		{"\xff\x00[", "limit=%20NaN&&=&a[b]=c"},
		{`[[[[[[[[[[`, "sort"},
		{``, "limit=99999999999999999999999"},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	apps := map[string]fasthttp.RequestHandler{}
	for name, body := range map[string]validate.Schema{
		"builder":           contractOrder.Strict(),
		"builder unchecked": kittest.Unchecked(contractOrder.Strict()),
		"struct":            validate.Struct[contractOrderT](),
		"struct unchecked":  kittest.Unchecked(validate.Struct[contractOrderT]()),
	} {
		app := quiet()
		app.Route(fx.Route{Method: "POST", Path: "/o", Body: body, Query: contractList.Strict(),
			Handler: func(c *fx.Ctx) error { return c.JSON(200, "ok") }})
		if err := app.Boot(); err != nil {
			f.Fatal(err)
		}
		apps[name] = app.Handler()
	}
	f.Fuzz(func(t *testing.T, body, query []byte) {
		wire := map[string]string{}
		for name, h := range apps {
			var rc fasthttp.RequestCtx
			rc.Request.Header.SetMethod("POST")
			rc.Request.URI().SetPath("/o")
			rc.Request.URI().SetQueryStringBytes(query)
			rc.Request.Header.SetContentType("application/json")
			rc.Request.SetBody(body)
			h(&rc)
			st, out := rc.Response.StatusCode(), rc.Response.Body()
			if st >= 500 {
				t.Fatalf("%s: %d %s", name, st, out)
			}
			if !json.Valid(out) {
				t.Fatalf("%s: invalid JSON %q", name, out)
			}
			if st != 200 {
				contractIssues(t, st, string(out))
			}
			wire[name] = strconv.Itoa(st) + " " + string(out)
		}
		// a schema checking the grammar itself answers as fx's check did
		for _, name := range []string{"builder", "struct"} {
			if wire[name] != wire[name+" unchecked"] {
				t.Fatalf("%s: %s\nbehind fx's grammar check: %s", name, wire[name], wire[name+" unchecked"])
			}
		}
	})
}

// benchContract drives the booted handler directly (no network), so the
// numbers are the framework's: routing, contract, handler, envelope.
func benchContract(b *testing.B, body validate.Schema, payload string, status int) {
	app := quiet()
	app.Route(fx.Route{Method: "POST", Path: "/orders", Body: body,
		Handler: func(c *fx.Ctx) error {
			if o, ok := fx.ValidBody[*contractOrderT](c); ok {
				return c.JSON(201, o)
			}
			o, _ := fx.ValidBody[map[string]any](c)
			return c.JSON(201, o)
		}})
	if err := app.Boot(); err != nil {
		b.Fatal(err)
	}
	kittest.BenchPost(b, app.Handler(), "/orders", payload, status)
}

// noopSchema validates nothing: the baseline of a contract (decode only).
type noopSchema struct{}

func (noopSchema) Validate(v any) validate.Result { return validate.Result{Value: v} }

const (
	validOrder    = `{"name":"Ada","items":[{"sku":"a","qty":1},{"sku":"b","qty":2}]}`
	invalidOrder  = `{"name":"","items":[{"sku":"a","qty":1},{"qty":0}]}`
	badTypesOrder = `{"name":1,"items":[{"sku":"a","qty":"1"},{"qty":true}]}`
)

func BenchmarkContract(b *testing.B) {
	b.Run("noop-schema/valid", func(b *testing.B) { benchContract(b, noopSchema{}, validOrder, 201) })
	b.Run("builder/valid", func(b *testing.B) { benchContract(b, contractOrder, validOrder, 201) })
	b.Run("builder/invalid", func(b *testing.B) { benchContract(b, contractOrder, invalidOrder, 422) })
	b.Run("struct/valid", func(b *testing.B) { benchContract(b, validate.Struct[contractOrderT](), validOrder, 201) })
	b.Run("struct/invalid-types", func(b *testing.B) { benchContract(b, validate.Struct[contractOrderT](), badTypesOrder, 422) })
	b.Run("malformed/duplicate-key", func(b *testing.B) { benchContract(b, contractOrder, `{"name":"a","name":"b"}`, 422) })
}

// selfRefSchema panics with a map that contains itself: formatting it with
// %v would recurse until the stack overflows (a fatal error, not a panic).
type selfRefSchema struct{}

func (selfRefSchema) Validate(any) validate.Result {
	m := map[string]any{}
	m["self"] = m
	panic(m)
}

// TestContractSchemaPanicWithCyclicValue: the 500, not a crashed process.
func TestContractSchemaPanicWithCyclicValue(t *testing.T) {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Route(fx.Route{Method: "POST", Path: "/x", Body: selfRefSchema{}, Handler: func(c *fx.Ctx) error { return nil }})
	if st, body := contractDo(t, app, "POST", "/x", "", `{}`); st != 500 {
		t.Fatalf("status %d, want 500: %s", st, body)
	}
}
