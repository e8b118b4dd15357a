package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/openapi"
	"github.com/fxhq/fx/validate"
	"github.com/fxhq/fx/validate/validatetest"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// The routes of examples/validation.

type Item struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

type Order struct {
	Customer string `json:"customer"`
	Items    []Item `json:"items"`
}

type ListParams struct {
	Limit int      `json:"limit"`
	Tags  []string `json:"tag"`
}

// orderSchema is the order contract of the examples/validation service.
var orderSchema = validatetest.HugeSchema()

var notifyQuery = validate.Query(validate.Fields{
	"notify": validate.Boolean().Default(false),
})

// signupSchema is a schema of another library: it does not describe
// itself, so its body is documented as any JSON value.
type signupSchema struct{}

func (signupSchema) Validate(v any) validate.Result {
	m, _ := v.(map[string]any)
	if pw, _ := m["password"].(string); len(pw) < 10 {
		return validate.Result{Issues: []validate.Issue{{Path: []string{"password"}, Message: "Must be at least 10 characters long"}}}
	}
	return validate.Result{Value: m}
}

type OrderCreated struct {
	Order  map[string]any `json:"order"`
	Notify bool           `json:"notify"`
}

type Lines struct {
	Customer string `json:"customer"`
	Lines    int    `json:"lines"`
}

type Me struct {
	Subject string   `json:"subject"`
	Roles   []string `json:"roles"`
}

type PutItem struct {
	ID       int64    `path:"id"`
	Currency string   `query:"currency,required"`
	Tags     []string `query:"tag"`
	Key      string   `header:"X-Idempotency-Key"`
	Body     Item
}

type Cart struct {
	ID       int64  `json:"id"`
	Items    []Item `json:"items"`
	Currency string `json:"currency"`
}

var errNoSuchFile = fx.NewError(404, "FILE_NOT_FOUND", "No such file")

func exampleApp(t *testing.T) *fx.App {
	app := fx.New()
	app.Route(fx.Route{
		Method: "POST", Path: "/orders", Body: orderSchema, Query: notifyQuery,
		Handler: func(c *fx.Ctx) error {
			o, _ := fx.ValidBody[map[string]any](c)
			q, _ := fx.ValidQuery[map[string]any](c)
			return c.JSON(201, OrderCreated{Order: o, Notify: q["notify"].(bool)})
		},
		Doc:       fx.RouteDoc{Summary: "Place an order", Tags: []string{"orders"}},
		Responses: []fx.ResponseDoc{{Status: 201, Body: OrderCreated{}}},
	})
	app.Route(fx.Route{
		Method: "POST", Path: "/orders/typed", Body: validate.Struct[Order](),
		Handler: func(c *fx.Ctx) error {
			o, _ := fx.ValidBody[Order](c)
			return c.JSON(201, Lines{Customer: strings.ToUpper(o.Customer), Lines: len(o.Items)})
		},
		Responses: []fx.ResponseDoc{{Status: 201, Body: Lines{}}},
	})
	app.Route(fx.Route{
		Method: "POST", Path: "/signup", Body: signupSchema{},
		Handler:   func(c *fx.Ctx) error { return c.JSON(201, map[string]string{"status": "welcome"}) },
		Responses: []fx.ResponseDoc{{Status: 201, Body: map[string]string{}}},
	})
	app.Route(fx.Route{
		Method: "GET", Path: "/products", Query: validate.QueryStruct[ListParams](),
		Handler: func(c *fx.Ctx) error {
			p, _ := fx.ValidQuery[ListParams](c)
			return c.JSON(200, p)
		},
		Responses: []fx.ResponseDoc{{Body: ListParams{}}},
	})
	app.Route(fx.Route{
		Method: "GET", Path: "/files/*rest", Errors: []*fx.Error{errNoSuchFile},
		Handler: func(c *fx.Ctx) error {
			if c.Param("rest") != "readme.txt" {
				return errNoSuchFile
			}
			return c.JSON(200, map[string]string{"path": c.Param("rest")})
		},
		Responses: []fx.ResponseDoc{{Body: map[string]string{}}},
	})

	// The routes of examples/auth, with API keys.
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{
		"key-ada-0123456789":   {Subject: "ada", Roles: []string{"admin"}},
		"key-grace-0123456789": {Subject: "grace"},
	})
	if err != nil {
		t.Fatal(err)
	}
	me := func(c *fx.Ctx) error {
		p, _ := middleware.PrincipalFrom(c)
		return c.JSON(200, Me{Subject: p.Subject, Roles: p.Roles})
	}
	api := app.Group("/api", middleware.Auth(middleware.AuthConfig{APIKeys: keys, Optional: true})).Tags("auth")
	api.Route(fx.Route{Method: "GET", Path: "/me", Middleware: []fx.Middleware{middleware.RequireRoles()},
		Handler: me, Responses: []fx.ResponseDoc{{Body: Me{}}}})
	admin := api.Group("/admin", middleware.RequireRoles("admin"))
	admin.Route(fx.Route{Method: "GET", Path: "/stats", Handler: me, Responses: []fx.ResponseDoc{{Body: Me{}}}})
	tenants := api.Group("/t", middleware.RequireRoles(), middleware.Tenant(middleware.TenantConfig{Required: true}))
	tenants.Route(fx.Route{Method: "GET", Path: "/projects/:id", Handler: func(c *fx.Ctx) error {
		id, _ := middleware.TenantFrom(c)
		return c.JSON(200, map[string]string{"tenant": id, "project": c.Param("id")})
	}, Responses: []fx.ResponseDoc{{Body: map[string]string{}}}})
	// A typed operation: documented from its types alone.
	fx.Op(app, "PUT", "/carts/:id/items", func(c *fx.Ctx, in *PutItem) (*Cart, error) {
		return &Cart{ID: in.ID, Items: []Item{in.Body}, Currency: in.Currency}, nil
	}, func(r *fx.Route) { r.Responses = []fx.ResponseDoc{{Status: 201}} })
	openapi.Mount(app, openapi.Config{Title: "Examples", Version: "1.0.0"})
	return app
}

// load fetches the app's served document and builds the validator.
func load(t *testing.T, app *fx.App) ([]byte, validator.Validator) {
	t.Helper()
	resp, err := app.Test(httptest.NewRequest("GET", "/openapi.json", nil))
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("/openapi.json: %d %s", resp.StatusCode, spec)
	}
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	return spec, v
}

// TestDocumentIsOpenAPI31: the served document validates against the
// OpenAPI 3.1 schema, and libopenapi builds a model of it.
func TestDocumentIsOpenAPI31(t *testing.T) {
	spec, v := load(t, exampleApp(t))
	if ok, errs := v.ValidateDocument(); !ok {
		for _, e := range errs {
			t.Errorf("%s: %s (%v)", e.Message, e.Reason, e.SchemaValidationErrors)
		}
	}
	doc, _ := libopenapi.NewDocument(spec)
	m, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	if m.Model.Version != "3.1.0" || m.Model.Paths.PathItems.Len() != 9 {
		t.Errorf("version %s, %d paths", m.Model.Version, m.Model.Paths.PathItems.Len())
	}
}

type exchange struct {
	method, target, body string
	header               []string
	status               int
	code                 string // error code; "" for a success
	validRequest         bool   // the request itself must also validate
}

// TestResponsesConformToDocument: real requests, successes and every kind
// of error, each response validated against the document.
func TestResponsesConformToDocument(t *testing.T) {
	app := exampleApp(t)
	_, v := load(t, app)
	goodOrder := `{"customer":"Ada","items":[{"sku":"A-1","qty":2}]}`
	for _, x := range []exchange{
		{method: "POST", target: "/orders?notify=true", body: goodOrder, status: 201, validRequest: true},
		{method: "POST", target: "/orders?notify=maybe", body: `{"customer":"","items":[{"qty":0}],"coupon":1}`, status: 422, code: fx.ErrorCodes.ValidationError},
		{method: "POST", target: "/orders", body: `{"customer":`, status: 422, code: fx.ErrorCodes.ValidationError},
		{method: "POST", target: "/orders", body: strings.Repeat(" ", 5<<20), status: 413, code: fx.ErrorCodes.PayloadTooLarge},
		{method: "POST", target: "/orders/typed", body: goodOrder, status: 201, validRequest: true},
		{method: "POST", target: "/orders/typed", body: `{"customer":1,"items":[{"sku":2}]}`, status: 422, code: fx.ErrorCodes.ValidationError},
		{method: "POST", target: "/signup", body: `{"email":"a@b.c","password":"correct horse"}`, status: 201, validRequest: true},
		{method: "POST", target: "/signup", body: `{"password":"short"}`, status: 422, code: fx.ErrorCodes.ValidationError},
		{method: "GET", target: "/products?limit=10&tag=a&tag=b", status: 200, validRequest: true},
		{method: "GET", target: "/products?limit=ten", status: 422, code: fx.ErrorCodes.ValidationError},
		// OpenAPI path templates match one segment: a catch-all value with
		// a '/' is served but no OpenAPI tool can match it to {rest}.
		{method: "GET", target: "/files/readme.txt", status: 200, validRequest: true},
		{method: "GET", target: "/files/nope", status: 404, code: "FILE_NOT_FOUND"},
		{method: "PUT", target: "/carts/7/items?currency=EUR&tag=a&tag=b", body: `{"sku":"A-1","qty":2}`, header: []string{"X-Idempotency-Key", "k"}, status: 201, validRequest: true},
		{method: "PUT", target: "/carts/x/items", body: `{"sku":1}`, status: 422, code: fx.ErrorCodes.ValidationError},
		{method: "PUT", target: "/carts/7/items?currency=EUR", status: 422, code: fx.ErrorCodes.ValidationError},
		{method: "GET", target: "/api/me", header: []string{"X-API-Key", "key-grace-0123456789"}, status: 200, validRequest: true},
		{method: "GET", target: "/api/me", status: 401, code: fx.ErrorCodes.Unauthenticated},
		{method: "GET", target: "/api/me", header: []string{"X-API-Key", "wrong"}, status: 401, code: fx.ErrorCodes.Unauthenticated},
		{method: "GET", target: "/api/admin/stats", header: []string{"X-API-Key", "key-ada-0123456789"}, status: 200, validRequest: true},
		{method: "GET", target: "/api/admin/stats", header: []string{"X-API-Key", "key-grace-0123456789"}, status: 403, code: fx.ErrorCodes.Forbidden},
		{method: "GET", target: "/api/t/projects/7", header: []string{"X-API-Key", "key-grace-0123456789", "X-Tenant-ID", "acme"}, status: 200, validRequest: true},
		{method: "GET", target: "/api/t/projects/7", header: []string{"X-API-Key", "key-grace-0123456789"}, status: 400, code: fx.ErrorCodes.TenantRequired},
	} {
		name := fmt.Sprintf("%s %s → %d", x.method, x.target, x.status)
		if len(name) > 80 {
			name = name[:80]
		}
		t.Run(name, func(t *testing.T) {
			newReq := func() *http.Request {
				var body io.Reader
				if x.body != "" {
					body = strings.NewReader(x.body)
				}
				r := httptest.NewRequest(x.method, x.target, body)
				if x.body != "" {
					r.Header.Set("Content-Type", "application/json")
				}
				for i := 0; i+1 < len(x.header); i += 2 {
					r.Header.Set(x.header[i], x.header[i+1])
				}
				return r
			}
			resp, err := app.Test(newReq())
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != x.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, x.status, raw)
			}
			if x.code != "" {
				var env struct{ Error struct{ Code string } }
				if json.Unmarshal(raw, &env); env.Error.Code != x.code {
					t.Fatalf("code %q, want %q: %s", env.Error.Code, x.code, raw)
				}
			}
			resp.Body = io.NopCloser(bytes.NewReader(raw))
			if ok, errs := v.ValidateHttpResponse(newReq(), resp); !ok {
				for _, e := range errs {
					t.Errorf("response does not conform: %s: %s %v\nbody: %.300s", e.Message, e.Reason, e.SchemaValidationErrors, raw)
				}
			}
			if x.validRequest {
				if ok, errs := v.ValidateHttpRequest(newReq()); !ok {
					for _, e := range errs {
						t.Errorf("request does not conform: %s: %s", e.Message, e.Reason)
					}
				}
			}
		})
	}
}

// TestHeadersTooLargeOnEveryOperation: every operation of the document
// declares 431 FX_HEADERS_TOO_LARGE, and the server answers it so: a
// request to any route, guarded, typed or plain, whose headers are over
// Config.HeaderLimit gets the envelope, and the answer conforms to the
// document.
func TestHeadersTooLargeOnEveryOperation(t *testing.T) {
	app := exampleApp(t)
	spec, v := load(t, app)
	var doc map[string]any
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatal(err)
	}
	n := headersTooLargeEverywhere(t, doc, v, "http://example.com", nil, app.Test)
	if n != 9 {
		t.Errorf("%d operations checked, want the 9 of the example app", n)
	}
}

// overHeaderLimit is a header value over fx's default Config.HeaderLimit
// (fx.DefaultHeaderLimit, which the apps under test keep).
var overHeaderLimit = strings.Repeat("h", fx.DefaultHeaderLimit+1024)

// headersTooLargeEverywhere sends, for every operation of doc, a request
// whose headers are over the server's limit (path parameters "1",
// headers sent as well: credentials), through send to base, and checks
// that the operation declares 431, that the server answers 431
// FX_HEADERS_TOO_LARGE in the envelope, and that v finds the answer
// conforming to the document. It returns how many operations it checked.
func headersTooLargeEverywhere(t *testing.T, doc map[string]any, v validator.Validator, base string, headers map[string]string,
	send func(*http.Request) (*http.Response, error)) int {
	t.Helper()
	param := regexp.MustCompile(`\{[^}]+\}`)
	n := 0
	paths, _ := doc["paths"].(map[string]any)
	for _, path := range sortedKeys(paths) {
		ops, _ := paths[path].(map[string]any)
		for _, method := range sortedKeys(ops) {
			op, ok := ops[method].(map[string]any)
			if !ok {
				continue
			}
			n++
			M := strings.ToUpper(method)
			if _, ok := op["responses"].(map[string]any)["431"]; !ok {
				t.Errorf("%s %s does not declare 431", M, path)
			}
			newReq := func() *http.Request {
				r, err := http.NewRequest(M, base+param.ReplaceAllString(path, "1"), nil)
				if err != nil {
					t.Fatal(err)
				}
				for k, val := range headers {
					r.Header.Set(k, val)
				}
				r.Header.Set("X-Padding", overHeaderLimit)
				return r
			}
			resp, err := send(newReq())
			if err != nil {
				t.Fatalf("%s %s: %v", M, path, err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if M == "HEAD" {
				if resp.StatusCode != 431 {
					t.Errorf("%s %s: %d, want 431", M, path, resp.StatusCode)
				}
				continue
			}
			env, err := fxtest.CheckEnvelope(resp.StatusCode, resp.Header, raw, nil)
			if err != nil || resp.StatusCode != 431 || env.Code != fx.ErrorCodes.HeadersTooLarge {
				t.Errorf("%s %s: %d %.200s (%v), want 431 %s", M, path, resp.StatusCode, raw, err, fx.ErrorCodes.HeadersTooLarge)
				continue
			}
			resp.Body = io.NopCloser(bytes.NewReader(raw))
			if ok, errs := v.ValidateHttpResponse(newReq(), resp); !ok {
				for _, e := range errs {
					t.Errorf("%s %s: the 431 does not conform: %s: %s %v", M, path, e.Message, e.Reason, e.SchemaValidationErrors)
				}
			}
		}
	}
	return n
}
