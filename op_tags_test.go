package fx_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/validate"
)

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
