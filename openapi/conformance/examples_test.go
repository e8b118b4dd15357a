package conformance

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	"github.com/pb33f/jsonschema/v6"
)

// failingStore is a rate-limit store that can fail, so that the rate
// limit declares its 503 too.
type failingStore struct{}

func (failingStore) Allow(context.Context, string, ratelimit.Limit) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errors.New("down")
}

// kitApp is an App with every first-party middleware that declares
// errors, and the health probes, so that its document has every error
// response they declare.
func kitApp(t *testing.T) *fx.App {
	t.Helper()
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{"key-ada-0123456789": {Subject: "ada"}})
	if err != nil {
		t.Fatal(err)
	}
	app := fx.New()
	health.New(health.Config{}).Register(app)
	app.Use(middleware.CORS(middleware.CORSConfig{AllowOrigins: []string{"https://app.example.com"}}))
	g := app.Group("/orders",
		middleware.Auth(middleware.AuthConfig{APIKeys: keys}),
		middleware.Tenant(middleware.TenantConfig{Required: true, BaseDomain: "example.com", MatchPrincipal: true}),
		middleware.RequireRoles("clerk"),
		ratelimit.New(ratelimit.Config{Limit: ratelimit.Limit{Requests: 10, Period: time.Minute}, Store: failingStore{}}),
		idempotency.New(idempotency.Config{Required: true}),
		middleware.Timeout(time.Second))
	g.Route(fx.Route{Method: "POST", Path: "", Body: orderSchema, Responses: []fx.ResponseDoc{{Status: 201, Body: OrderCreated{}}},
		Errors:  []*fx.Error{errNoSuchFile},
		Handler: func(c *fx.Ctx) error { return c.NoContent(201) }})
	openapi.Mount(app, openapi.Config{Title: "Kit", Version: "1.0.0"})
	return app
}

// served is app's /openapi.json.
func served(t *testing.T, app *fx.App) []byte {
	t.Helper()
	resp, err := app.Test(httptest.NewRequest("GET", "/openapi.json", nil))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("/openapi.json: %d %s", resp.StatusCode, b)
	}
	return b
}

// pointer escapes a JSON Pointer token.
func pointer(tok string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(tok)
}

// checkErrorExamples requires every error response (4xx, 5xx) of every
// operation of the document spec to have a JSON example, valid against
// its schema (JSON Schema 2020-12, the document's components resolved).
// It returns how many it validated.
func checkErrorExamples(t *testing.T, name string, spec []byte) int {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(spec))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("doc.json", doc); err != nil {
		t.Fatal(err)
	}
	root := doc.(map[string]any)
	checked := 0
	for _, path := range sortedKeys(root["paths"].(map[string]any)) {
		ops := root["paths"].(map[string]any)[path].(map[string]any)
		for _, method := range sortedKeys(ops) {
			op, ok := ops[method].(map[string]any)
			if !ok {
				continue
			}
			responses := op["responses"].(map[string]any)
			for _, status := range sortedKeys(responses) {
				if status < "400" {
					continue
				}
				resp := responses[status].(map[string]any)
				loc := "doc.json#/paths/" + pointer(path) + "/" + method + "/responses/" + status
				if r, ok := resp["$ref"].(string); ok {
					resp = root["components"].(map[string]any)["responses"].(map[string]any)[strings.TrimPrefix(r, "#/components/responses/")].(map[string]any)
					loc = "doc.json" + r
				}
				what := name + ": " + strings.ToUpper(method) + " " + path + " " + status
				mt, _ := resp["content"].(map[string]any)["application/json"].(map[string]any)
				example, ok := mt["example"]
				if !ok {
					t.Errorf("%s has no example", what)
					continue
				}
				sch, err := c.Compile(loc + "/content/application~1json/schema")
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if err := sch.Validate(example); err != nil {
					t.Errorf("%s: the example does not fit the schema: %v", what, err)
				}
				checked++
			}
		}
	}
	return checked
}

// TestErrorResponsesHaveValidExamples: every error response the
// generator writes has an example envelope, written from its declaration
// (code, message, details), and the example fits the response's schema:
// in the documents of an App with every first-party middleware, of the
// conformance example App, and of the examples as their clients are
// generated (scripts/openapi-clients/testdata).
func TestErrorResponsesHaveValidExamples(t *testing.T) {
	for name, app := range map[string]*fx.App{"kit": kitApp(t), "conformance": exampleApp(t)} {
		if n := checkErrorExamples(t, name, served(t, app)); n < 10 {
			t.Errorf("%s: only %d error responses", name, n)
		}
	}
	files, _ := filepath.Glob("../../scripts/openapi-clients/testdata/*.json")
	slices.Sort(files)
	if len(files) == 0 {
		t.Fatal("no example document in scripts/openapi-clients/testdata")
	}
	for _, f := range files {
		spec, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkErrorExamples(t, filepath.Base(f), spec)
	}
}
