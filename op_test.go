package fx_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/validate"
)

type opItem struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

type opIn struct {
	ID     int64    `path:"id"`
	Limit  uint8    `query:"limit"`
	Ratio  float64  `query:"ratio"`
	Tags   []string `query:"tag"`
	Strict bool     `query:"strict,required"`
	Key    string   `header:"X-Key,required"`
	Body   opItem
}

type opOut struct {
	ID    int64    `json:"id"`
	Limit uint8    `json:"limit"`
	Tags  []string `json:"tags"`
	Key   string   `json:"key"`
	Item  opItem   `json:"item"`
	Ratio float64  `json:"ratio"`
}

func opApp(cfg ...fx.Config) *fx.App {
	app := fx.New(cfg...)
	fx.Op(app, "POST", "/items/:id", func(c *fx.Ctx, in *opIn) (*opOut, error) {
		return &opOut{ID: in.ID, Limit: in.Limit, Tags: in.Tags, Key: in.Key, Item: in.Body, Ratio: in.Ratio}, nil
	}, func(r *fx.Route) { r.Responses = []fx.ResponseDoc{{Status: 201}} })
	return app
}

// TestOpBindsEverySource: path, query (repeated key too), header and body
// land in In; Out is encoded with the declared status.
func TestOpBindsEverySource(t *testing.T) {
	r := do(t, opApp(), "POST", "/items/42?limit=7&ratio=0.5&tag=a&tag=b&strict=true",
		`{"sku":"A-1","qty":2}`, "Content-Type", "application/json", "X-Key", "k1")
	if r.status != 201 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	want := `{"id":42,"limit":7,"tags":["a","b"],"key":"k1","item":{"sku":"A-1","qty":2},"ratio":0.5}`
	if string(r.body) != want {
		t.Errorf("body %s\nwant %s", r.body, want)
	}
}

// TestOpCollectsAllIssues: every failure of every source in one 422, in
// the envelope of route contracts.
func TestOpCollectsAllIssues(t *testing.T) {
	r := do(t, opApp(), "POST", "/items/x?limit=300&ratio=half&strict=maybe",
		`{"sku":1,"qty":"2"}`, "Content-Type", "application/json")
	got := opIssues(t, r)
	want := []string{
		"body:qty:Expected an integer, got a string",
		"body:sku:Expected a string, got a number",
		"header:X-Key:Required",
		"path:id:Expected an integer, got \"x\"",
		"query:limit:Must be at most 255",
		"query:ratio:Expected a number, got \"half\"",
		"query:strict:Expected true or false, got \"maybe\"",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("issues:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOpBoolParameters: a bool path, query or header field reads
// strconv.ParseBool's set (as validate.Query does, and as the OpenAPI
// request validators read the document's boolean), and refuses the rest.
func TestOpBoolParameters(t *testing.T) {
	type flags struct {
		P bool `path:"p"`
		Q bool `query:"q"`
		H bool `header:"X-H"`
	}
	app := fx.New()
	fx.Op(app, "GET", "/flags/:p", func(c *fx.Ctx, in *flags) (*flags, error) { return in, nil })
	for s, v := range map[string]bool{"1": true, "t": true, "T": true, "TRUE": true, "true": true, "True": true,
		"0": false, "f": false, "F": false, "FALSE": false, "false": false, "False": false} {
		r := do(t, app, "GET", "/flags/"+s+"?q="+s, "", "X-H", s)
		b := strconv.FormatBool(v)
		want := `{"P":` + b + `,"Q":` + b + `,"H":` + b + `}`
		if r.status != 200 || string(r.body) != want {
			t.Errorf("%s: %d %s, want %s", s, r.status, r.body, want)
		}
	}
	for _, s := range []string{"yes", "tRUE", "2", "on"} {
		r := do(t, app, "GET", "/flags/"+s+"?q="+s, "", "X-H", s)
		got := opIssues(t, r)
		msg := ":Expected true or false, got " + strconv.Quote(s)
		if want := []string{"header:X-H" + msg, "path:p" + msg, "query:q" + msg}; strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: issues %q, want %q", s, got, want)
		}
	}
}

// TestOpMaxIssues: Config.MaxIssues bounds the list and says truncated.
func TestOpMaxIssues(t *testing.T) {
	r := do(t, opApp(fx.Config{MaxIssues: 2}), "POST", "/items/x?limit=300",
		`{"sku":1,"qty":"2"}`, "Content-Type", "application/json")
	env := mustEnvelope(t, r, 422, fx.ErrorCodes.ValidationError)
	var d struct {
		Issues    []fx.ValidationIssue `json:"issues"`
		Truncated bool                 `json:"truncated"`
	}
	json.Unmarshal(env.Details, &d)
	if len(d.Issues) != 2 || !d.Truncated {
		t.Errorf("%d issues, truncated %v: %s", len(d.Issues), d.Truncated, env.Details)
	}
}

// TestOpBody: an empty body is required unless Body is a pointer; a
// non-JSON body is the contract's issue.
func TestOpBody(t *testing.T) {
	app := fx.New()
	type optional struct{ Body *opItem }
	fx.Op(app, "POST", "/opt", func(c *fx.Ctx, in *optional) (*opItem, error) {
		if in.Body == nil {
			return &opItem{SKU: "none"}, nil
		}
		return in.Body, nil
	})
	if r := do(t, app, "POST", "/opt", ""); string(r.body) != `{"sku":"none","qty":0}` {
		t.Errorf("optional body absent: %d %s", r.status, r.body)
	}
	if r := do(t, app, "POST", "/opt", `{"sku":"s","qty":1}`, "Content-Type", "application/json"); string(r.body) != `{"sku":"s","qty":1}` {
		t.Errorf("optional body sent: %d %s", r.status, r.body)
	}
	mustEnvelope(t, do(t, app, "POST", "/opt", `{"sku":`, "Content-Type", "application/json"), 422, fx.ErrorCodes.ValidationError)
	if r := do(t, app, "POST", "/opt", " null\n", "Content-Type", "application/json"); string(r.body) != `{"sku":"none","qty":0}` {
		t.Errorf("optional body null: %d %s", r.status, r.body)
	}
	// null beside white space JSON does not have is malformed, not absent
	mustEnvelope(t, do(t, app, "POST", "/opt", "\fnull", "Content-Type", "application/json"), 422, fx.ErrorCodes.ValidationError)
	mustEnvelope(t, do(t, app, "POST", "/opt", "null\v", "Content-Type", "application/json"), 422, fx.ErrorCodes.ValidationError)
	r := do(t, opApp(), "POST", "/items/1?strict=true", "", "X-Key", "k")
	env := mustEnvelope(t, r, 422, fx.ErrorCodes.ValidationError)
	if !strings.Contains(string(env.Details), "Request body is required") {
		t.Errorf("details %s", env.Details)
	}
}

// TestOpRefusesBadInput: an input that is not a struct panics at Op; a
// field Op cannot bind is a Boot error naming the field (never a panic).
func TestOpRefusesBadInput(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("not a struct: no panic")
		}
	}()
	fx.Op(fx.New(), "GET", "/x", func(c *fx.Ctx, in *int) (*int, error) { return in, nil })
}

// TestOpRouteInfo: the route table lists the operation's types and bound
// fields.
func TestOpRouteInfo(t *testing.T) {
	routes, err := opApp().Routes()
	if err != nil {
		t.Fatal(err)
	}
	r := routes[0]
	if r.In == nil || r.Out == nil || len(r.Input) != 7 || r.Input[6].In != "body" || !r.Input[6].Required {
		t.Errorf("%+v", r)
	}
}

type benchIn struct {
	ID   int64 `path:"id"`
	Body opItem
}

// BenchmarkOp compares a typed operation with a handler that binds the
// same path parameter and body by hand (c.Param, strconv, JSONBody) and
// writes the same output.
func BenchmarkOp(b *testing.B) {
	typed := fx.New()
	fx.Op(typed, "POST", "/items/:id", func(c *fx.Ctx, in *benchIn) (*opOut, error) {
		return &opOut{ID: in.ID, Item: in.Body}, nil
	})
	hand := fx.New()
	hand.Post("/items/:id", func(c *fx.Ctx) error {
		id, err := strconv.ParseInt(c.Param("id"), 10, 64)
		if err != nil {
			return fx.NewValidationError([]fx.ValidationIssue{{Location: "path", Path: []string{"id"}, Message: "Expected an integer"}})
		}
		item, err := fx.JSONBody[opItem](c)
		if err != nil {
			return err
		}
		return c.JSON(200, &opOut{ID: id, Item: item})
	})
	for name, app := range map[string]*fx.App{"op": typed, "hand": hand} {
		b.Run(name, func(b *testing.B) { kittest.BenchPost(b, app.Handler(), "/items/42", `{"sku":"A-1","qty":2}`, 200) })
	}
}

// TestOpOnGroupOwnPath: an operation may take its Group's own path (""),
// as Group.Route does, instead of panicking at registration.
func TestOpOnGroupOwnPath(t *testing.T) {
	app := fx.New()
	g := app.Group("/orders")
	fx.Op(g, "POST", "", func(c *fx.Ctx, in *struct{ Body opItem }) (*opItem, error) {
		return &in.Body, nil
	}, func(r *fx.Route) { r.Responses = []fx.ResponseDoc{{Status: 201}} })
	r := do(t, app, "POST", "/orders", `{"sku":"A-1","qty":2}`, "Content-Type", "application/json")
	if r.status != 201 || string(r.body) != `{"sku":"A-1","qty":2}` {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
}

type tagLine struct {
	SKU string `json:"sku" validate:"required,min=3" pattern:"^[A-Z0-9-]+$"`
	Qty int    `json:"qty" validate:"min=1,max=100"`
}

type tagOrder struct {
	Customer string     `json:"customer" validate:"required,max=10"`
	Quantity int        `json:"quantity" validate:"gte=1"`
	Lines    []tagLine  `json:"lines" validate:"omitempty,max=5,dive"`
	Email    string     `json:"email" validate:"omitempty,email"`
	Gift     *tagLine   `json:"gift"`
	Notes    []string   `json:"notes" validate:"dive,max=20"`
	Extra    *tagExtras `json:"extra"`
}

type tagExtras struct {
	Code string `json:"code" validate:"uuid"`
}

type tagIn struct {
	ID     int    `path:"id" validate:"min=1"`
	Limit  int    `query:"limit" validate:"omitempty,max=50"`
	Sort   string `query:"sort" validate:"required,oneof=asc desc"`
	Tenant string `header:"X-Tenant" validate:"omitempty,alphanum"`
	Body   tagOrder
}

func tagApp(cfg ...fx.Config) *fx.App {
	app := fx.New(cfg...)
	fx.Op(app, "POST", "/orders/:id", func(c *fx.Ctx, in *tagIn) (*tagOrder, error) { return &in.Body, nil })
	return app
}

// opIssues reads a 422's issues as "location:path:message" lines.
func opIssues(t *testing.T, r result) []string {
	got, _ := opIssuesTruncated(t, r)
	return got
}

func opIssuesTruncated(t *testing.T, r result) (got []string, truncated bool) {
	t.Helper()
	env := mustEnvelope(t, r, 422, fx.ErrorCodes.ValidationError)
	var d struct {
		Issues    []fx.ValidationIssue `json:"issues"`
		Truncated bool                 `json:"truncated"`
	}
	if err := json.Unmarshal(env.Details, &d); err != nil {
		t.Fatal(err)
	}
	for _, is := range d.Issues {
		got = append(got, is.Location+":"+strings.Join(is.Path, ".")+":"+is.Message)
	}
	return got, d.Truncated
}

// TestOpTagsValid: a body and parameters that pass every tag reach the
// handler.
func TestOpTagsValid(t *testing.T) {
	r := do(t, tagApp(), "POST", "/orders/3?sort=asc&limit=10", `{"customer":"ada","quantity":2,"lines":[{"sku":"A-100","qty":3}]}`,
		"Content-Type", "application/json", "X-Tenant", "acme1")
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

// TestOpTagsTypeAndRuleIssuesTogether: a float where an int belongs does
// not hide rule failures elsewhere, in the body or the parameters.
func TestOpTagsTypeAndRuleIssuesTogether(t *testing.T) {
	r := do(t, tagApp(), "POST", "/orders/0?sort=up&limit=99", `{"customer":"a very long name","quantity":1.5,"lines":[{"sku":"a","qty":0},{"sku":1,"qty":500}],"extra":{"code":"nope"}}`,
		"Content-Type", "application/json", "X-Tenant", "a-b")
	got := opIssues(t, r)
	want := []string{
		"body:customer:Must be at most 10 characters long",
		"body:extra.code:Must be a valid UUID",
		"body:lines.0.qty:Must be at least 1",
		"body:lines.0.sku:Must be at least 3 characters long",
		"body:lines.1.qty:Must be at most 100",
		"body:lines.1.sku:Expected a string, got a number",
		"body:quantity:Expected an integer, got 1.5",
		"header:X-Tenant:Must contain only ASCII letters and digits",
		"path:id:Must be at least 1",
		"query:limit:Must be at most 50",
		`query:sort:Must be one of: "asc", "desc"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("issues:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOpTagsRequiredBody: a non-pointer Body refuses a missing body, null
// and, with required fields, {} — each with its issue.
func TestOpTagsRequiredBody(t *testing.T) {
	app := tagApp()
	for body, want := range map[string]string{
		"":     "body::Request body is required",
		"null": "body::Expected an object, got null",
		"{}":   "body:customer:Required\nbody:quantity:Must be at least 1",
	} {
		got := opIssues(t, do(t, app, "POST", "/orders/1?sort=asc", body, "Content-Type", "application/json"))
		if strings.Join(got, "\n") != want {
			t.Errorf("body %q: issues %v, want [%s]", body, got, want)
		}
	}
	// A pointer Body may be null: it stays nil, no rule runs.
	opt := fx.New()
	type in struct{ Body *tagOrder }
	fx.Op(opt, "POST", "/", func(c *fx.Ctx, in *in) (*bool, error) { ok := in.Body == nil; return &ok, nil })
	if r := do(t, opt, "POST", "/", "null", "Content-Type", "application/json"); r.status != 200 || string(r.body) != "true" {
		t.Errorf("optional null body: %d %s", r.status, r.body)
	}
}

// TestOpTagsMaxIssues: rule issues are bounded by Config.MaxIssues too.
func TestOpTagsMaxIssues(t *testing.T) {
	body := `{"customer":"","quantity":0,"notes":["` + strings.Repeat("x", 30) + `","` + strings.Repeat("y", 30) + `"]}`
	r := do(t, tagApp(fx.Config{MaxIssues: 3}), "POST", "/orders/1?sort=asc", body, "Content-Type", "application/json")
	if got, truncated := opIssuesTruncated(t, r); len(got) != 3 || !truncated {
		t.Errorf("issues %v, truncated %v", got, truncated)
	}
}

// TestOpTagsBootError: a tag fx cannot honour, on the body or on a
// parameter, is a configuration error of Boot naming route, type, field
// and word; the handler answers 500.
func TestOpTagsBootError(t *testing.T) {
	type badBody struct {
		Name string `json:"name" validate:"required,iscolor"`
	}
	type in struct {
		Q    string `query:"q" pattern:"(["`
		Body badBody
	}
	app := quiet()
	fx.Op(app, "POST", "/bad", func(c *fx.Ctx, in *in) (*bool, error) { return nil, nil })
	err := app.Boot()
	if err == nil {
		t.Fatal("Boot accepted a bad tag")
	}
	var te *validate.TagError
	if !errors.As(err, &te) {
		// the config error carries the message; the *TagError is in its text
		t.Logf("boot error: %v", err)
	}
	for _, want := range []string{"Route POST /bad", "badBody", "Name", `"iscolor"`, "Q", "pattern:(["} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("boot error %q does not name %s", err, want)
		}
	}
	mustEnvelope(t, do(t, app, "POST", "/bad", "{}"), 500, fx.ErrorCodes.InternalError)
}

// TestOpTagsRouteInfo: parameter and body schemas carry their tags;
// quantity (gte=1: absent is 0, refused) is required like customer.
func TestOpTagsRouteInfo(t *testing.T) {
	routes, err := tagApp().Routes()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range routes[0].Input {
		if f.In == "body" {
			b, _ := json.Marshal(f.Schema)
			for _, want := range []string{`"required":["customer","quantity"]`, `"maxLength":10`, `"pattern":"^[A-Z0-9-]+$"`, `"format":"uuid"`, `"lines":{"items":`} {
				if !strings.Contains(string(b), want) {
					t.Errorf("body schema lacks %s: %s", want, b)
				}
			}
		}
	}
	for _, f := range routes[0].Input {
		if f.In == "query" && f.Name == "sort" {
			if !f.Required || f.Schema["enum"] == nil {
				t.Errorf("sort: required %v, schema %v", f.Required, f.Schema)
			}
			return
		}
	}
	t.Error("no sort field")
}

// BenchmarkOpConstraints: a typed operation whose body, path and query
// carry constraint tags, on a valid request and on a 422, beside a
// handler that checks the same rules by hand.
func BenchmarkOpConstraints(b *testing.B) {
	valid := `{"customer":"ada","quantity":2,"lines":[{"sku":"A-100","qty":3},{"sku":"B-200","qty":1}],"email":"ada@example.com"}`
	invalid := `{"customer":"a very long name","quantity":1.5,"lines":[{"sku":"a","qty":0}],"email":"nope"}`
	hand := fx.New()
	type plain struct {
		Customer string `json:"customer"`
		Quantity int    `json:"quantity"`
		Lines    []struct {
			SKU string `json:"sku"`
			Qty int    `json:"qty"`
		} `json:"lines"`
		Email string `json:"email"`
	}
	hand.Post("/orders/:id", func(c *fx.Ctx) error {
		o, err := fx.JSONBody[plain](c)
		if err != nil {
			return err
		}
		var issues []fx.ValidationIssue
		if n := len([]rune(o.Customer)); n == 0 || n > 10 {
			issues = append(issues, fx.ValidationIssue{Location: "body", Path: []string{"customer"}, Message: "Must be at most 10 characters long"})
		}
		if o.Quantity < 1 {
			issues = append(issues, fx.ValidationIssue{Location: "body", Path: []string{"quantity"}, Message: "Must be at least 1"})
		}
		for _, l := range o.Lines {
			if len(l.SKU) < 3 || l.Qty < 1 || l.Qty > 100 {
				issues = append(issues, fx.ValidationIssue{Location: "body", Path: []string{"lines"}, Message: "Invalid"})
			}
		}
		if !strings.Contains(o.Email, "@") {
			issues = append(issues, fx.ValidationIssue{Location: "body", Path: []string{"email"}, Message: "Must be a valid email address"})
		}
		if len(issues) > 0 {
			return fx.NewValidationError(issues)
		}
		return c.JSON(200, &o)
	})
	for _, app := range []struct {
		name string
		app  *fx.App
	}{{"op", tagApp()}, {"hand", hand}} {
		for _, body := range []struct {
			name, body string
			status     int
		}{{"valid", valid, 200}, {"422", invalid, 422}} {
			b.Run(app.name+"/"+body.name, func(b *testing.B) {
				kittest.BenchPost(b, app.app.Handler(), "/orders/7?sort=asc", body.body, body.status)
			})
		}
	}
}

// TestOpBodyStringsShareTheInput: a typed operation allocates its input
// with room for a body's strings (half the body's length, for a body of
// up to 1 KiB), so a valid body of strings and a slice costs two
// allocations (the input with its strings, the slice); strings that do
// not fit the room, or a longer body, one more (the strings'); the
// strings the handler keeps stay intact after the request buffer is
// reused.
func TestOpBodyStringsShareTheInput(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items: allocation counts vary")
	}
	type line struct {
		SKU string `json:"sku" validate:"required"`
		Qty int    `json:"qty"`
	}
	type in struct {
		Body struct {
			Customer string `json:"customer" validate:"required"`
			Lines    []line `json:"lines"`
		}
	}
	var kept []string
	app := fx.New()
	fx.Op(app, "POST", "/orders", func(c *fx.Ctx, in *in) (*struct{}, error) {
		if len(kept) < 2 {
			kept = append(kept, in.Body.Customer, in.Body.Lines[0].SKU)
		}
		return &struct{}{}, nil
	})
	h := app.Handler()
	for _, tc := range []struct {
		customer string
		want     float64
	}{{"Ada Lovelace", 2}, {strings.Repeat("x", 300), 3}, {strings.Repeat("x", 1100), 3}} {
		rc, serve := benchCtx(h, "POST", "/orders")
		rc.Request.Header.SetContentType("application/json")
		rc.Request.SetBodyString(`{"customer":"` + tc.customer + `","lines":[{"sku":"A100","qty":2}]}`)
		kept = nil
		serve()
		if rc.Response.StatusCode() != 200 {
			t.Fatalf("%d %s", rc.Response.StatusCode(), rc.Response.Body())
		}
		copy(rc.Request.Body(), strings.Repeat("#", len(rc.Request.Body()))) // the request buffer, reused
		if kept[0] != tc.customer || kept[1] != "A100" {
			t.Errorf("the strings kept changed with the request buffer: %.20q %q", kept[0], kept[1])
		}
		rc.Request.SetBodyString(`{"customer":"` + tc.customer + `","lines":[{"sku":"A100","qty":2}]}`)
		if n := testing.AllocsPerRun(200, serve); n != tc.want {
			t.Errorf("body of %d bytes: %v allocations per request, want %v", len(rc.Request.Body()), n, tc.want)
		}
	}
}
