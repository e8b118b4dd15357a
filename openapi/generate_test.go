package openapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/health"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/fxhq/fx/middleware/ratelimit"
	"github.com/fxhq/fx/openapi"
	"github.com/fxhq/fx/validate"
)

type User struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

var errUserNotFound = fx.NewError(404, "USER_NOT_FOUND", "No such user")

// testApp has a builder contract, a Struct contract, a catch-all, a
// guarded group and a hidden route.
func testApp() *fx.App {
	app := fx.New()
	ok := func(c *fx.Ctx) error { return c.JSON(200, map[string]any{}) }
	app.Route(fx.Route{
		Method: "POST", Path: "/orders",
		Body: validate.Object(validate.Fields{
			"customer": validate.String().MinLen(1),
			"qty":      validate.Integer().Min(1).Max(99),
		}).Strict(),
		Query:     validate.Query(validate.Fields{"notify": validate.Boolean().Default(false), "ref": validate.String()}),
		Handler:   ok,
		Doc:       fx.RouteDoc{Summary: "Place an order", Tags: []string{"orders"}},
		Responses: []fx.ResponseDoc{{Status: 201, Body: User{}}},
	})
	app.Route(fx.Route{Method: "GET", Path: "/users/:id", Handler: ok,
		Errors: []*fx.Error{errUserNotFound}, Responses: []fx.ResponseDoc{{Body: User{}}}})
	app.Get("/files/*rest", ok)
	guard := fx.Declare(func(c *fx.Ctx, next fx.Next) error { return next() }, fx.Declaration{
		Errors:  []*fx.Error{fx.NewCatalogError(fx.ErrorCodes.Unauthenticated, "x"), fx.NewCatalogError(fx.ErrorCodes.Forbidden, "x")},
		Headers: []fx.HeaderDoc{{Name: "WWW-Authenticate", Required: true, Statuses: []int{401}}},
	})
	admin := app.Group("/admin", guard).Doc(fx.RouteDoc{Tags: []string{"admin"}})
	admin.Route(fx.Route{Method: "PUT", Path: "/users/:id", Body: validate.Struct[User](), Handler: ok,
		Doc: fx.RouteDoc{OperationID: "replaceUser", Deprecated: true}})
	app.Route(fx.Route{Method: "GET", Path: "/internal", Handler: ok, Doc: fx.RouteDoc{Hidden: true}})
	app.Handle("PURGE", "/cache", ok)
	return app
}

// get walks a decoded document.
func get(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("at %q: %T is not an object", k, v)
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("no key %q in %v", k, keysOf(m))
		}
	}
	return v
}

func keysOf(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func generate(t *testing.T, app *fx.App) map[string]any {
	t.Helper()
	doc, err := openapi.Generate(app, openapi.Config{Title: "Shop", Version: "1.2.0"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any // as a client reads it
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	schemas = get(t, out, "components", "schemas").(map[string]any)
	return out
}

// schemas are the components.schemas of the last document generate
// returned (the tests of this package do not run in parallel).
var schemas map[string]any

// deref follows a schema's $ref into schemas.
func deref(t *testing.T, s any) map[string]any {
	t.Helper()
	m := s.(map[string]any)
	if r, ok := m["$ref"].(string); ok {
		name := r[len("#/components/schemas/"):]
		if m, ok = schemas[name].(map[string]any); !ok {
			t.Fatalf("no schema %s", name)
		}
	}
	return m
}

// errorSchemas are the schemas of the envelope's error member of one
// error response: one, or the variants of its oneOf.
func errorSchemas(t *testing.T, op any, status string) []map[string]any {
	t.Helper()
	env := deref(t, get(t, op, "responses", status, "content", "application/json", "schema"))
	errObj := deref(t, get(t, env, "properties", "error"))
	variants, ok := errObj["oneOf"].([]any)
	if !ok {
		return []map[string]any{errObj}
	}
	var out []map[string]any
	for _, v := range variants {
		out = append(out, deref(t, v))
	}
	return out
}

// codesAt lists the codes an operation documents at status, sorted.
func codesAt(t *testing.T, op any, status string) []string {
	t.Helper()
	var codes []string
	for _, s := range errorSchemas(t, op, status) {
		for _, c := range get(t, s, "properties", "code", "enum").([]any) {
			codes = append(codes, c.(string))
		}
	}
	slices.Sort(codes)
	return codes
}

// TestGeneratePathsAndOperations: paths in OpenAPI syntax, metadata,
// parameters and bodies from the contracts; hidden routes and methods
// OpenAPI lacks are left out.
func TestGeneratePathsAndOperations(t *testing.T) {
	doc := generate(t, testApp())
	if doc["openapi"] != "3.1.0" || get(t, doc, "info", "title") != "Shop" {
		t.Errorf("header: %v %v", doc["openapi"], doc["info"])
	}
	paths := get(t, doc, "paths").(map[string]any)
	if want := []string{"/admin/users/{id}", "/files/{rest}", "/orders", "/users/{id}"}; !slices.Equal(keysOf(paths), want) {
		t.Fatalf("paths %v, want %v", keysOf(paths), want)
	}
	post := get(t, paths, "/orders", "post")
	if get(t, post, "summary") != "Place an order" || get(t, post, "operationId") != "postOrders" {
		t.Errorf("metadata: %v", post)
	}
	params := get(t, post, "parameters").([]any)
	if len(params) != 2 || get(t, params[0], "name") != "notify" || get(t, params[0], "in") != "query" ||
		params[0].(map[string]any)["required"] != nil || get(t, params[1], "required") != true {
		t.Errorf("query parameters: %v", params)
	}
	body := get(t, post, "requestBody", "content", "application/json", "schema")
	if get(t, body, "additionalProperties") != false || get(t, body, "properties", "qty", "maximum") != 99.0 {
		t.Errorf("body schema: %v", body)
	}
	if get(t, post, "requestBody", "required") != true {
		t.Error("a required body is not marked required")
	}
	if get(t, post, "responses", "201", "content", "application/json", "schema", "properties", "name", "type") != "string" {
		t.Errorf("201 body: %v", get(t, post, "responses", "201"))
	}
	rest := get(t, paths, "/files/{rest}", "get", "parameters").([]any)[0]
	if get(t, rest, "in") != "path" || get(t, rest, "required") != true || get(t, rest, "description") == "" {
		t.Errorf("catch-all: %v", rest)
	}
	put := get(t, paths, "/admin/users/{id}", "put")
	if get(t, put, "operationId") != "replaceUser" || get(t, put, "deprecated") != true ||
		!slices.Equal(get(t, put, "tags").([]any), []any{"admin"}) {
		t.Errorf("group defaults: %v", put)
	}
	if get(t, put, "requestBody", "content", "application/json", "schema", "properties", "id", "type") != "string" {
		t.Errorf("Struct body: %v", put)
	}
}

// TestGenerateErrorResponses: each operation lists, by status, exactly the
// codes it can produce.
func TestGenerateErrorResponses(t *testing.T) {
	paths := get(t, generate(t, testApp()), "paths")
	post := get(t, paths, "/orders", "post")
	for status, want := range map[string][]string{
		"422": {fx.ErrorCodes.ValidationError}, "413": {fx.ErrorCodes.PayloadTooLarge}, "500": {fx.ErrorCodes.InternalError},
	} {
		if got := codesAt(t, post, status); !slices.Equal(got, want) {
			t.Errorf("POST /orders %s: %v, want %v", status, got, want)
		}
	}
	if get(t, errorSchemas(t, post, "422")[0], "properties", "details", "$ref") != "#/components/schemas/ValidationDetails" {
		t.Error("422 does not describe its details")
	}
	user := get(t, paths, "/users/{id}", "get")
	if got := keysOf(get(t, user, "responses").(map[string]any)); !slices.Equal(got, []string{"200", "404", "431", "500"}) {
		t.Errorf("GET /users/{id} responses %v (no contract: no 422; no body: no 413; 431 on every operation)", got)
	}
	if got := codesAt(t, user, "404"); !slices.Equal(got, []string{"USER_NOT_FOUND"}) {
		t.Errorf("declared error: %v", got)
	}
	put := get(t, paths, "/admin/users/{id}", "put")
	if got := codesAt(t, put, "401"); !slices.Equal(got, []string{fx.ErrorCodes.Unauthenticated}) {
		t.Errorf("401: %v", got)
	}
	if got := codesAt(t, put, "403"); !slices.Equal(got, []string{fx.ErrorCodes.Forbidden}) {
		t.Errorf("403: %v", got)
	}
	if get(t, put, "responses", "401", "headers", "WWW-Authenticate") == nil {
		t.Error("401 without WWW-Authenticate")
	}
	if _, has := schemas["ValidationDetails"]; !has {
		t.Error("no ValidationDetails schema")
	}
}

// TestGenerateHeadersTooLarge: every operation, whatever it reads,
// guards or declares, answers 431 FX_HEADERS_TOO_LARGE through the one
// shared response (no copy per operation, no header: the server answers it
// before any middleware runs), whose schema is typed as every error
// schema is: error.code the enum of that one code, message a string.
func TestGenerateHeadersTooLarge(t *testing.T) {
	doc := generate(t, testApp())
	ops := 0
	for path, item := range get(t, doc, "paths").(map[string]any) {
		for method, op := range item.(map[string]any) {
			ops++
			if got := get(t, op, "responses", "431"); !reflect.DeepEqual(got, map[string]any{"$ref": "#/components/responses/HeadersTooLarge"}) {
				t.Errorf("%s %s 431: %v, want the shared response", method, path, got)
			}
		}
	}
	if ops < 4 {
		t.Fatalf("%d operations in the test app", ops)
	}
	responses := get(t, doc, "components", "responses").(map[string]any)
	if got := keysOf(responses); !slices.Equal(got, []string{"HeadersTooLarge"}) {
		t.Errorf("components.responses: %v", got)
	}
	shared := get(t, responses, "HeadersTooLarge").(map[string]any)
	if _, has := shared["headers"]; has {
		t.Error("the 431 declares headers, which no middleware sets on it")
	}
	env := deref(t, get(t, shared, "content", "application/json", "schema"))
	errObj := deref(t, get(t, env, "properties", "error"))
	if got := get(t, errObj, "properties", "code", "enum"); !reflect.DeepEqual(got, []any{fx.ErrorCodes.HeadersTooLarge}) {
		t.Errorf("431 code: %v", got)
	}
	if got := get(t, errObj, "properties", "message", "type"); got != "string" {
		t.Errorf("431 message: %v", got)
	}
	if got := get(t, errObj, "required"); !reflect.DeepEqual(got, []any{"code", "message"}) {
		t.Errorf("431 required: %v", got)
	}
	// a route that declares a 431 code of its own lists both codes in its
	// own schema, as any status with several codes
	app := fx.New()
	app.Route(fx.Route{Method: "GET", Path: "/cookie", Handler: func(c *fx.Ctx) error { return nil },
		Errors: []*fx.Error{fx.NewError(431, "APP_COOKIE_TOO_LARGE", "Cookie too large")}})
	cookie := get(t, generate(t, app), "paths", "/cookie", "get")
	if got := codesAt(t, cookie, "431"); !slices.Equal(got, []string{"APP_COOKIE_TOO_LARGE", fx.ErrorCodes.HeadersTooLarge}) {
		t.Errorf("GET /cookie 431: %v", got)
	}
	// no operation, no shared response (linters flag an unused component)
	app = fx.New()
	app.Route(fx.Route{Method: "GET", Path: "/secret", Handler: func(c *fx.Ctx) error { return nil }, Doc: fx.RouteDoc{Hidden: true}})
	if _, has := generate(t, app)["components"].(map[string]any)["responses"]; has {
		t.Error("components.responses with no operation")
	}
}

// TestGenerateTimeoutAndRateLimit: the first-party Timeout and RateLimit
// middleware declare 504 FX_TIMEOUT and 429 FX_RATE_LIMITED on the routes
// they guard, and only there.
func TestGenerateTimeoutAndRateLimit(t *testing.T) {
	app := fx.New()
	app.Route(fx.Route{Method: "GET", Path: "/slow", Middleware: []fx.Middleware{
		middleware.Timeout(time.Second),
		ratelimit.New(ratelimit.Config{Limit: ratelimit.Limit{Requests: 1, Period: time.Second}}),
	}, Handler: func(c *fx.Ctx) error { return nil }})
	app.Get("/fast", func(c *fx.Ctx) error { return nil })
	paths := get(t, generate(t, app), "paths")
	slow := get(t, paths, "/slow", "get")
	if got := codesAt(t, slow, "504"); !slices.Equal(got, []string{fx.ErrorCodes.Timeout}) {
		t.Errorf("GET /slow 504: %v", got)
	}
	if got := codesAt(t, slow, "429"); !slices.Equal(got, []string{fx.ErrorCodes.RateLimited}) {
		t.Errorf("GET /slow 429: %v", got)
	}
	if got := keysOf(get(t, paths, "/fast", "get", "responses").(map[string]any)); !slices.Equal(got, []string{"200", "431", "500"}) {
		t.Errorf("GET /fast responses %v", got)
	}
}

// TestGenerateBootError: a broken app has no document.
func TestGenerateBootError(t *testing.T) {
	app := fx.New()
	app.Route(fx.Route{Method: "GET", Path: "/x"})
	if _, err := openapi.Generate(app, openapi.Config{}); err == nil {
		t.Fatal("no error for an app that cannot boot")
	}
}

type getUser struct {
	ID      int32  `path:"id"`
	Verbose bool   `query:"verbose"`
	Key     string `header:"X-Key,required"`
}

// TestGenerateTypedOperation: a typed operation is documented from its
// types: parameters by location, 422 from binding, Out as the response.
func TestGenerateTypedOperation(t *testing.T) {
	app := fx.New()
	fx.Op(app, "GET", "/users/:id", func(c *fx.Ctx, in *getUser) (*User, error) { return &User{}, nil })
	op := get(t, generate(t, app), "paths", "/users/{id}", "get")
	params := get(t, op, "parameters").([]any)
	if len(params) != 3 || get(t, params[0], "schema", "maximum") != 2147483647.0 ||
		get(t, params[1], "in") != "query" || get(t, params[2], "in") != "header" || get(t, params[2], "required") != true {
		t.Errorf("parameters %v", params)
	}
	if got := codesAt(t, op, "422"); !slices.Equal(got, []string{fx.ErrorCodes.ValidationError}) {
		t.Errorf("422: %v", got)
	}
	if get(t, op, "responses", "200", "content", "application/json", "schema", "properties", "name", "type") != "string" {
		t.Errorf("200: %v", get(t, op, "responses", "200"))
	}
}

type created struct {
	ID string `json:"id"`
}

type placeOrder struct {
	Body struct {
		SKU string `json:"sku"`
	}
}

// TestGenerateDeclaredSuccessStatus: an operation whose first declared
// response is 201 is documented as 201 with its body, and not as 200 —
// for a typed operation (which answers with that status) and a route.
func TestGenerateDeclaredSuccessStatus(t *testing.T) {
	app := fx.New()
	fx.Op(app, "POST", "/orders", func(c *fx.Ctx, in *placeOrder) (*created, error) { return &created{}, nil },
		func(r *fx.Route) { r.Responses = []fx.ResponseDoc{{Status: 201, Description: "Placed"}} })
	app.Route(fx.Route{Method: "POST", Path: "/users", Handler: func(c *fx.Ctx) error { return c.JSON(201, created{}) },
		Responses: []fx.ResponseDoc{{Status: 201, Body: created{}}, {Status: 202}}})
	paths := get(t, generate(t, app), "paths")
	for path, want := range map[string][]string{"/orders": {"201"}, "/users": {"201", "202"}} {
		op := get(t, paths, path, "post")
		var success []string
		for status := range get(t, op, "responses").(map[string]any) {
			if status[0] == '2' {
				success = append(success, status)
			}
		}
		slices.Sort(success)
		if !slices.Equal(success, want) {
			t.Errorf("POST %s documents %v, want %v", path, success, want)
		}
		if get(t, op, "responses", "201", "content", "application/json", "schema", "properties", "id", "type") != "string" {
			t.Errorf("POST %s 201 body: %v", path, get(t, op, "responses", "201"))
		}
	}
}

// TestGenerateDocumentDefaults: every operation has a summary (its method
// and path when RouteDoc has none), a description and a tag; the document
// has a server ("/" by default), the license, a contact and a
// description (by default naming the Config field to set), and the tags,
// described ones first.
func TestGenerateDocumentDefaults(t *testing.T) {
	doc, err := openapi.Generate(testApp(), openapi.Config{
		License: &openapi.License{Name: "MIT", Identifier: "MIT"},
		Tags:    []openapi.Tag{{Name: "orders", Description: "Orders."}},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(doc)
	doc = nil
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if get(t, doc, "paths", "/orders", "post", "summary") != "Place an order" ||
		get(t, doc, "paths", "/users/{id}", "get", "summary") != "GET /users/{id}" {
		t.Errorf("summaries: %v", get(t, doc, "paths"))
	}
	if s := get(t, doc, "servers").([]any); len(s) != 1 || get(t, s[0], "url") != "/" {
		t.Errorf("servers %v", s)
	}
	if l := get(t, doc, "info", "license"); get(t, l, "name") != "MIT" || get(t, l, "identifier") != "MIT" || len(l.(map[string]any)) != 2 {
		t.Errorf("license %v", l)
	}
	// an untagged route is tagged by its first path segment; every tag
	// used is listed, with a description
	tags := get(t, doc, "tags").([]any)
	var names []string
	for _, tag := range tags {
		names = append(names, get(t, tag, "name").(string))
		if get(t, tag, "description") == "" {
			t.Errorf("tag without a description: %v", tag)
		}
	}
	if get(t, tags[0], "description") != "Orders." || !slices.Equal(names, []string{"orders", "users", "files", "admin"}) {
		t.Errorf("tags %v", tags)
	}
	if got := get(t, doc, "paths", "/users/{id}", "get", "tags").([]any); len(got) != 1 || got[0] != "users" {
		t.Errorf("GET /users/{id} tags %v", got)
	}
	// descriptions default to the summary; info names what to add
	if get(t, doc, "paths", "/users/{id}", "get", "description") != "GET /users/{id}." {
		t.Errorf("description %v", get(t, doc, "paths", "/users/{id}", "get", "description"))
	}
	if c := get(t, doc, "info", "contact", "name"); c != "Set openapi.Config.Contact" {
		t.Errorf("default contact %v", c)
	}
	if d := get(t, doc, "info", "description").(string); !strings.Contains(d, "openapi.Config.Description") {
		t.Errorf("default description %q", d)
	}
	withServer, _ := openapi.Generate(fx.New(), openapi.Config{Servers: []openapi.Server{{URL: "https://api.example.com", Description: "Production"}}})
	if s := withServer["servers"].([]any); len(s) != 1 || s[0].(map[string]any)["url"] != "https://api.example.com" {
		t.Errorf("configured servers %v", s)
	}
	// no License: one naming the field; no operation with a 422: no
	// (unused) validation schemas
	if l := withServer["info"].(map[string]any)["license"]; l.(map[string]any)["name"] != "Set openapi.Config.License" {
		t.Errorf("default license %v", l)
	}
	if _, ok := withServer["components"].(map[string]any)["schemas"].(map[string]any)["ValidationDetails"]; ok {
		t.Error("ValidationDetails listed with no operation using it")
	}
}

// TestGenerateHealth: the probes health.Probes.Register mounts document the 503
// FX_SERVICE_UNAVAILABLE (with Retry-After) a failed probe answers: /readyz
// always, /livez only with a liveness check (without one it cannot fail).
func TestGenerateHealth(t *testing.T) {
	for _, live := range []bool{false, true} {
		app := fx.New()
		h := health.New()
		if live {
			h.AddLiveness("loop", func(context.Context) error { return nil })
		}
		h.Register(app)
		paths := get(t, generate(t, app), "paths")
		for _, p := range []string{"/livez", "/readyz"} {
			op := get(t, paths, p, "get")
			if p == "/livez" && !live {
				if got := keysOf(get(t, op, "responses").(map[string]any)); !slices.Equal(got, []string{"200", "431", "500"}) {
					t.Errorf("%s without checks: responses %v", p, got)
				}
				continue
			}
			if got := codesAt(t, op, "503"); !slices.Equal(got, []string{fx.ErrorCodes.ServiceUnavailable}) {
				t.Errorf("%s 503: %v", p, got)
			}
			if get(t, op, "responses", "503", "headers", "Retry-After") == nil {
				t.Errorf("%s 503 without Retry-After", p)
			}
			if got := keysOf(get(t, op, "responses").(map[string]any)); !slices.Equal(got, []string{"200", "431", "500", "503"}) {
				t.Errorf("%s responses %v", p, got)
			}
		}
	}
}

// TestGenerateHeaders: the request headers middleware read and the
// response headers they set are documented on the routes they apply to,
// on the statuses they are sent with; an operation's own success headers
// too.
func TestGenerateHeaders(t *testing.T) {
	app := fx.New()
	app.Use(middleware.RequestID(middleware.RequestIDConfig{}))
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{"k_0123456789abcdef": {Subject: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	g := app.Group("/orders",
		middleware.Auth(middleware.AuthConfig{APIKeys: keys}),
		ratelimit.New(ratelimit.Config{Limit: ratelimit.Limit{Requests: 10, Period: time.Minute}}),
		idempotency.New(idempotency.Config{Required: true}))
	ok := func(c *fx.Ctx) error { return c.JSON(201, created{}) }
	g.Route(fx.Route{Method: "POST", Path: "", Handler: ok, Responses: []fx.ResponseDoc{{Status: 201, Body: created{},
		Headers: []fx.HeaderDoc{{Name: "Location", Required: true}}}}})
	g.Route(fx.Route{Method: "GET", Path: "", Handler: ok})
	paths := get(t, generate(t, app), "paths")
	post, list := get(t, paths, "/orders", "post"), get(t, paths, "/orders", "get")

	params := func(op any) map[string]bool { // name → required
		out := map[string]bool{}
		for _, p := range get(t, op, "parameters").([]any) {
			if get(t, p, "in") == "header" {
				r, _ := p.(map[string]any)["required"].(bool)
				out[get(t, p, "name").(string)] = r
			}
		}
		return out
	}
	if p := params(post); !p["Idempotency-Key"] {
		t.Errorf("POST: Idempotency-Key not a required header: %v", p)
	} else if _, ok := p["X-Request-ID"]; !ok {
		t.Errorf("POST: X-Request-ID not a header parameter: %v", p)
	}
	if p := params(list); len(p) != 1 {
		t.Errorf("GET: header parameters %v, want X-Request-ID only (idempotency acts on POST and PATCH)", p)
	}
	if got := codesAt(t, post, "422"); !slices.Equal(got, []string{fx.ErrorCodes.IdempotencyKeyReused}) {
		t.Errorf("POST 422: %v (a route without a contract validates nothing)", got)
	}
	if _, has := get(t, list, "responses").(map[string]any)["409"]; has {
		t.Error("GET documents the 409 of idempotency, which does not act on GET")
	}
	headers := func(op any, status string) []string {
		h, _ := get(t, op, "responses", status).(map[string]any)["headers"].(map[string]any)
		return keysOf(h)
	}
	// RateLimit and Idempotent-Replayed are set before next: on what runs
	// after their middleware (and RateLimit on its own 429), never on the
	// 401 of Auth before them; Idempotent-Replayed is on no error of
	// idempotency itself nor of the rate limit before it.
	for status, want := range map[string][]string{
		"201": {"Idempotent-Replayed", "Location", "RateLimit", "RateLimit-Policy", "X-Request-ID"},
		"401": {"WWW-Authenticate", "X-Request-ID"},
		"409": {"RateLimit", "RateLimit-Policy", "Retry-After", "X-Request-ID"},
		"429": {"RateLimit", "RateLimit-Policy", "Retry-After", "X-Request-ID"},
		"503": {"RateLimit", "RateLimit-Policy", "Retry-After", "X-Request-ID"},
	} {
		if got := headers(post, status); !slices.Equal(got, want) {
			t.Errorf("POST %s headers %v, want %v", status, got, want)
		}
	}
	if get(t, post, "responses", "201", "headers", "Location", "required") != true {
		t.Error("Location is not required on the 201")
	}
	if got := headers(list, "200"); !slices.Equal(got, []string{"RateLimit", "RateLimit-Policy", "X-Request-ID"}) {
		t.Errorf("GET 200 headers %v", got)
	}
}

type roomOut struct {
	Name    string `json:"name"`
	Members []string
}

type roomsOut struct {
	Rooms  []roomOut          `json:"rooms"`
	Labels map[string]string  `json:"labels"`
	Avatar []byte             `json:"avatar"`
	Next   *string            `json:"next"`
	ByName map[string]roomOut `json:"byName,omitempty"`
}

// TestTypedOutputNeverNull: a typed operation's output is encoded with
// nil slices, maps and []byte as [], {} and "", and its document says
// so: their types do not list null (clients get Room[], not
// Room[] | null); a nil pointer is still null, and documented so. A plain
// route's declared body, which c.JSON encodes (nil is null), stays
// nullable.
func TestTypedOutputNeverNull(t *testing.T) {
	app := fx.New()
	fx.Op(app, "GET", "/rooms", func(c *fx.Ctx, _ *struct{}) (*roomsOut, error) {
		return &roomsOut{Rooms: []roomOut{{Name: "a"}}}, nil
	})
	app.Route(fx.Route{Method: "GET", Path: "/plain", Handler: func(c *fx.Ctx) error { return c.JSON(200, &roomsOut{}) },
		Responses: []fx.ResponseDoc{{Body: roomsOut{}}}})
	res, err := app.Test(httptest.NewRequest("GET", "/rooms", nil))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	if want := `{"rooms":[{"name":"a","Members":[]}],"labels":{},"avatar":"","next":null}`; string(body) != want {
		t.Errorf("GET /rooms: %s, want %s", body, want)
	}
	doc := generate(t, app)
	typed := get(t, doc, "paths", "/rooms", "get", "responses", "200", "content", "application/json", "schema", "properties")
	for _, p := range [][]string{{"rooms"}, {"rooms", "items", "properties", "Members"}, {"labels"}, {"avatar"}} {
		var at any = typed
		for _, k := range p {
			at = at.(map[string]any)[k]
		}
		if typ := at.(map[string]any)["type"]; reflect.TypeOf(typ).Kind() != reflect.String {
			t.Errorf("typed %v: type %v, want one type, not null", p, typ)
		}
	}
	if typ := get(t, typed, "next", "type"); !reflect.DeepEqual(typ, []any{"string", "null"}) {
		t.Errorf("typed next: type %v, want nullable", typ)
	}
	plain := get(t, doc, "paths", "/plain", "get", "responses", "200", "content", "application/json", "schema", "properties")
	if typ := get(t, plain, "rooms", "type"); !reflect.DeepEqual(typ, []any{"array", "null"}) {
		t.Errorf("plain rooms: type %v, want nullable (c.JSON sends nil as null)", typ)
	}
}
