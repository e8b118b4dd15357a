package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx/examples/orders/service"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/fxhq/fx/middleware/ratelimit"
)

const (
	acmeKey    = "ak_test_acme_0123456789"
	initechKey = "ak_test_initech_0123456789"
	testLimit  = 40 // requests per hour per tenant
)

// TestContract walks the service's whole contract with one strict client
// (fxtest's default for an App with a document): every response is
// checked against the route's declared responses (status, code, body
// type), and RequireFullCoverage fails the test unless every declared
// response of every route was answered at least once. So the service
// answers only what its document says, and everything it says is
// exercised.
func TestContract(t *testing.T) {
	db := service.NewStore()
	// MaxKeys 1: with one request in flight the store is full, which is
	// how the 503 of an unavailable store is provoked without faking one.
	idem := idempotency.NewMemoryStore(idempotency.MemoryStoreConfig{MaxKeys: 1})
	app, err := service.New(service.Config{
		Keys: map[string]middleware.Principal{
			acmeKey:    {Subject: "acme-shop", Tenant: "acme"},
			initechKey: {Subject: "initech-shop", Tenant: "initech"},
		},
		Limit: ratelimit.Limit{Name: "tenant", Requests: testLimit, Period: time.Hour},
		Idem:  idem,
		Store: db,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := fxtest.New(t, app, fxtest.RequireFullCoverage())
	as := func(r *fxtest.Request) *fxtest.Request {
		return r.Header("X-API-Key", acmeKey).Header("X-Tenant-ID", "acme")
	}
	create := func(key, body string) *fxtest.Request {
		return as(c.Post("/orders")).Header("Idempotency-Key", key).JSON(body)
	}
	const book = `{"customer":"Ada Lovelace","email":"ada@example.com","lines":[{"sku":"BOOK-1","qty":2}]}`

	// 409 and 503 from idempotency, while a first request is in flight
	// (its handler waits for the store's lock, which the test holds).
	db.Lock()
	done := make(chan *fxtest.Response)
	go func() { done <- create("k-slow", book).Do() }()
	for idem.Len() == 0 {
		time.Sleep(time.Millisecond)
	}
	create("k-slow", book).Do().AssertError(409, "FX_IDEMPOTENCY_IN_FLIGHT").AssertHeader("Retry-After", "1")
	create("k-other", book).Do().AssertError(503, "FX_SERVICE_UNAVAILABLE")
	db.Unlock()
	first := (<-done).AssertStatus(201).AssertHeader("Location", "/orders/ord_1")

	// POST /orders: 201 with Location, a replay, a reused and a missing key.
	r := create("k-1", book).Do().AssertStatus(201).AssertHeader("Location", "/orders/ord_2")
	create("k-1", book).Do().AssertJSON(201, string(r.Body)).AssertHeader("Idempotent-Replayed", "true")
	create("k-1", `{"customer":"Bob","lines":[{"sku":"BOOK-1","qty":1}]}`).Do().
		AssertError(422, "FX_IDEMPOTENCY_KEY_REUSED")
	as(c.Post("/orders")).JSON(book).Do().AssertError(400, "FX_IDEMPOTENCY_KEY_REQUIRED")
	create("k-2", `{"customer":"","email":"nope","lines":[{"sku":"b!","qty":0},{"sku":"CUP-1","qty":101}]}`).Do().
		AssertIssues(
			fxtest.Issue{Location: "body", Path: "customer", Message: "Required"},
			fxtest.Issue{Location: "body", Path: "email", Message: "Must be a valid email address"},
			fxtest.Issue{Location: "body", Path: "lines.0.qty", Message: "Must be at least 1"},
			fxtest.Issue{Location: "body", Path: "lines.0.sku", Message: "Must be at least 3 characters long"},
			fxtest.Issue{Location: "body", Path: "lines.1.qty", Message: "Must be at most 100"},
		)
	create("k-3", `{"customer":"Ada","lines":[]}`).Do().
		AssertIssues(fxtest.Issue{Location: "body", Path: "lines", Message: "Must have at least 1 item"})

	// GET /orders/:id: the order, 404 for another tenant's or no order,
	// 422 for an id that cannot be one.
	var created service.Order
	first.Decode(&created)
	as(c.Get("/orders/ord_1")).Do().AssertJSON(200, string(first.Body))
	as(c.Get("/orders/ord_999")).Do().AssertError(404, "APP_ORDER_NOT_FOUND")
	as(c.Get("/orders/42")).Do().AssertIssues(fxtest.Issue{Location: "path", Path: "id"})

	// GET /orders: filters and their constraints.
	var list service.OrderList
	as(c.Get("/orders")).Query("status", "open").Query("limit", "1").Do().AssertStatus(200).Decode(&list)
	if len(list.Orders) != 1 || list.Orders[0].ID != created.ID {
		t.Errorf("GET /orders?status=open&limit=1 = %+v, want [%s]", list.Orders, created.ID)
	}
	as(c.Get("/orders")).Query("customer", "Nobody").Do().AssertJSON(200, `{"orders":[]}`)
	as(c.Get("/orders")).Query("status", "lost").Query("limit", "500").Do().AssertIssues(
		fxtest.Issue{Location: "query", Path: "limit", Message: "Must be at most 100"},
		fxtest.Issue{Location: "query", Path: "status"},
	)

	// The guards, on every route: no key, no tenant, another tenant, and
	// the tenant's rate limit.
	for _, route := range []func() *fxtest.Request{
		func() *fxtest.Request { return c.Post("/orders").Header("Idempotency-Key", "k-4").JSON(book) },
		func() *fxtest.Request { return c.Get("/orders/ord_1") },
		func() *fxtest.Request { return c.Get("/orders") },
	} {
		route().Header("X-Tenant-ID", "acme").Do().AssertError(401, "FX_UNAUTHENTICATED")
		route().Header("X-API-Key", acmeKey).Do().AssertError(400, "FX_TENANT_REQUIRED")
		route().Header("X-API-Key", acmeKey).Header("X-Tenant-ID", "initech").Do().AssertError(403, "FX_FORBIDDEN")
	}
	initech := func(r *fxtest.Request) *fxtest.Request {
		return r.Header("X-API-Key", initechKey).Header("X-Tenant-ID", "initech")
	}
	for range testLimit {
		initech(c.Get("/orders")).Do().AssertStatus(200)
	}
	initech(c.Get("/orders")).Do().AssertError(429, "FX_RATE_LIMITED")
	initech(c.Get("/orders/ord_1")).Do().AssertError(429, "FX_RATE_LIMITED")
	initech(c.Post("/orders")).Header("Idempotency-Key", "k-5").JSON(book).Do().AssertError(429, "FX_RATE_LIMITED")
	// acme's own quota is untouched by initech's.
	as(c.Get("/orders/ord_1")).Do().AssertStatus(200)
}

// TestDocument: the document is served without credentials and says
// what the routes do: the three operations, the declared 404, the
// constraints of the body.
func TestDocument(t *testing.T) {
	app, err := service.New(service.Config{})
	if err != nil {
		t.Fatal(err)
	}
	r := fxtest.New(t, app).Get("/openapi.json").Do().AssertStatus(200)
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	r.Decode(&doc)
	for path, method := range map[string]string{"/orders": "post", "/orders/{id}": "get"} {
		if _, ok := doc.Paths[path][method]; !ok {
			t.Errorf("document has no %s %s: %v", method, path, doc.Paths)
		}
	}
	if _, ok := doc.Paths["/orders"]["post"].Responses["201"]; !ok {
		t.Errorf("POST /orders is not documented as 201: %s", r.Body)
	}
	if _, ok := doc.Paths["/orders/{id}"]["get"].Responses["404"]; !ok {
		t.Errorf("GET /orders/{id} does not document its 404: %s", r.Body)
	}
	for _, want := range []string{`"maxLength":80`, `"pattern":"^[A-Z0-9-]+$"`, `"minItems":1`, `"APP_ORDER_NOT_FOUND"`} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("document lacks %s", want)
		}
	}
	if len(doc.Paths) != 2 {
		t.Errorf("document has %d paths, want 2 (the docs routes are hidden)", len(doc.Paths))
	}
	if dir := os.Getenv("FX_OPENAPI_OUT"); dir != "" { // .ci/run lints it with Redocly
		if err := os.WriteFile(filepath.Join(dir, "examples-orders.json"), r.Body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
