package fx_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
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
	}, func(r *fx.Route) { r.Responses = []fx.Response{{Status: 201}} })
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
		"query:limit:Must be between 0 and 255",
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

// TestOpRefusesBadInput: programming errors panic at Op.
func TestOpRefusesBadInput(t *testing.T) {
	type noParam struct {
		ID string `path:"id"`
	}
	type badType struct {
		M map[string]int `query:"m"`
	}
	for name, f := range map[string]func(){
		"not a struct": func() {
			fx.Op(fx.New(), "GET", "/x", func(c *fx.Ctx, in *int) (*int, error) { return in, nil })
		},
		"no such param": func() {
			fx.Op(fx.New(), "GET", "/x", func(c *fx.Ctx, in *noParam) (*int, error) { return nil, nil })
		},
		"bad type": func() {
			fx.Op(fx.New(), "GET", "/x", func(c *fx.Ctx, in *badType) (*int, error) { return nil, nil })
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
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
	}, func(r *fx.Route) { r.Responses = []fx.Response{{Status: 201}} })
	r := do(t, app, "POST", "/orders", `{"sku":"A-1","qty":2}`, "Content-Type", "application/json")
	if r.status != 201 || string(r.body) != `{"sku":"A-1","qty":2}` {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
}
