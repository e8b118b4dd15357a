//go:build clients

package live

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fxhq/fx/fxtest"
	oapi "github.com/fxhq/fx/scripts/openapi-clients/gen/oapi/orders"
	ogen "github.com/fxhq/fx/scripts/openapi-clients/gen/ogen/orders"
)

// The demo credentials examples/orders ships with.
const (
	ordersKey    = "ak_demo_acme_0123456789"
	ordersTenant = "acme"
	ordersLimit  = 600 // requests a minute per tenant
	// untilLimited bounds the requests sent to reach the tenant's 429: the
	// bucket holds ordersLimit and refills by ordersLimit a minute while
	// they are sent, so on a slow machine ordersLimit requests are not
	// always enough to empty it.
	untilLimited = 3 * ordersLimit
)

// Request edits: what a call sends besides what its client, true to the
// document, would.
func without(header string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Del(header) }
}

func with(header, value string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set(header, value) }
}

// overLimit replaces the body by one over the server's default limit
// (fx.DefaultBodyLimit, 4 MiB).
func overLimit(r *http.Request) {
	big := []byte(`{"customer":"` + strings.Repeat("a", 4<<20) + `"}`)
	r.Body, r.GetBody, r.ContentLength = io.NopCloser(bytes.NewReader(big)), nil, int64(len(big))
}

// fault turns on the fault switch of the served App (fxtest.FaultHeader):
// the request gets the 500 FX_INTERNAL_ERROR every operation declares.
func fault(r *http.Request) { r.Header.Set(fxtest.FaultHeader, "on") }

// overHeaders adds a header that puts the request's head over the
// server's default limit (fx.DefaultHeaderLimit, 8 KiB): the connection
// layer answers 431 FX_HEADERS_TOO_LARGE, before any route.
func overHeaders(r *http.Request) { r.Header.Set("X-Padding", strings.Repeat("a", 8<<10)) }

// everyOperation are the edits every operation of every example answers
// the same way, whatever its contract: the fault switch's 500 and the
// connection layer's 431.
var everyOperation = []func(*http.Request){fault, overHeaders}

// guards are the answers of the middleware in front of every operation:
// no tenant (400), no credentials (401), another tenant (403).
var guards = []func(*http.Request){without("X-Tenant-ID"), without("X-API-Key"), with("X-Tenant-ID", "globex")}

// guarded returns ctx, then ctx with each of the guards.
func guarded(ctx context.Context) []context.Context {
	out := []context.Context{ctx}
	for _, edit := range guards {
		out = append(out, withEdit(ctx, edit))
	}
	return out
}

// apiKey is the request editor of the oapi-codegen clients: every request
// sends key as X-API-Key.
func apiKey(key string) func(context.Context, *http.Request) error {
	return func(_ context.Context, r *http.Request) error {
		r.Header.Set("X-API-Key", key)
		return nil
	}
}

const (
	validOrder   = `{"customer":"Ada Lovelace","email":"ada@example.com","lines":[{"sku":"BOOK-1","qty":2}]}`
	otherOrder   = `{"customer":"Bob","lines":[{"sku":"BOOK-1","qty":1}]}`
	invalidOrder = `{"customer":"","email":"nope","lines":[{"sku":"b!","qty":0}]}`
)

type ordersSec struct{}

func (ordersSec) ApiKeyAuth(context.Context, ogen.OperationName) (ogen.ApiKeyAuth, error) {
	return ogen.ApiKeyAuth{APIKey: ordersKey}, nil
}

func ordersOgen(t *testing.T, ex example, r *recorder) {
	ctx := context.Background()
	c, err := ogen.NewClient(ex.base, ordersSec{}, ogen.WithClient(r.httpClient()))
	if err != nil {
		t.Fatal(err)
	}
	body := func(s string) *ogen.PostOrdersReq {
		var b ogen.PostOrdersReq
		if err := json.Unmarshal([]byte(s), &b); err != nil {
			t.Fatal(err)
		}
		return &b
	}
	post := func(ctx context.Context, key, order string) {
		res, err := c.PostOrders(ctx, body(order), ogen.PostOrdersParams{XTenantID: ordersTenant, IdempotencyKey: key})
		r.ogen("postOrders", res, err)
	}
	getByID := func(ctx context.Context, id string) ogen.GetOrdersByIdRes {
		res, err := c.GetOrdersById(ctx, ogen.GetOrdersByIdParams{ID: id, XTenantID: ordersTenant})
		r.ogen("getOrdersById", res, err)
		return res
	}
	list := func(ctx context.Context, p ogen.GetOrdersParams) ogen.GetOrdersRes {
		p.XTenantID = ordersTenant
		res, err := c.GetOrders(ctx, p)
		r.ogen("getOrders", res, err)
		return res
	}

	// 409 and 503 from idempotency: a first POST stays in its handler
	// (the server holds the orders store) and holds the idempotency
	// store's one key; the same key again, then another key.
	ex.control("hold")
	var slow ogen.PostOrdersRes
	var slowErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		slow, slowErr = c.PostOrders(ctx, body(validOrder), ogen.PostOrdersParams{XTenantID: ordersTenant, IdempotencyKey: "k-slow"})
	}()
	ex.control("claimed")
	post(ctx, "k-slow", validOrder)
	post(ctx, "k-other", validOrder)
	ex.control("release")
	<-done
	r.ogen("postOrders", slow, slowErr)

	// POST /orders: created, replayed, the key reused for another body,
	// invalid, no key, over the body limit.
	res, err := c.PostOrders(ctx, body(validOrder), ogen.PostOrdersParams{XTenantID: ordersTenant, IdempotencyKey: "k-1"})
	r.ogen("postOrders", res, err)
	created, ok := res.(*ogen.PostOrdersCreatedHeaders)
	if !ok || created.Location != "/orders/"+created.Response.ID || created.Response.Lines[0].Sku != "BOOK-1" {
		t.Fatalf("ogen: POST /orders = %#v", res)
	}
	post(ctx, "k-1", validOrder)
	post(ctx, "k-1", otherOrder)
	post(ctx, "k-2", invalidOrder)
	post(withEdit(ctx, without("Idempotency-Key")), "", validOrder)
	post(withEdit(ctx, overLimit), "k-3", validOrder)

	// GET /orders/{id}: found, none, an id that cannot be one.
	if got, ok := getByID(ctx, created.Response.ID).(*ogen.GetOrdersByIdOKHeaders); !ok || got.Response.ID != created.Response.ID {
		t.Errorf("ogen: GET /orders/%s = %#v", created.Response.ID, got)
	}
	getByID(ctx, "ord_999")
	getByID(ctx, "42")

	// GET /orders: a filtered list, a limit over the maximum.
	// Two orders: the one held in its handler, then k-1.
	if got, ok := list(ctx, ogen.GetOrdersParams{Status: ogen.NewOptGetOrdersStatus(ogen.GetOrdersStatusOpen)}).(*ogen.GetOrdersOKHeaders); !ok || len(got.Response.Orders) != 2 {
		t.Errorf("ogen: GET /orders?status=open = %#v", got)
	}
	list(ctx, ogen.GetOrdersParams{Limit: ogen.NewOptInt64(500)})

	// The guards of every operation, what every operation answers alike,
	// then the tenant's rate limit.
	for _, edit := range append(guards, everyOperation...) {
		post(withEdit(ctx, edit), "k-4", validOrder)
		getByID(withEdit(ctx, edit), created.Response.ID)
		list(withEdit(ctx, edit), ogen.GetOrdersParams{})
	}
	for range untilLimited {
		if _, limited := list(ctx, ogen.GetOrdersParams{}).(*ogen.GetOrders429ErrorHeaders); limited {
			break
		}
	}
	getByID(ctx, created.Response.ID)
	post(ctx, "k-5", validOrder)
}

func ordersOapi(t *testing.T, ex example, r *recorder) {
	ctx := context.Background()
	c, err := oapi.NewClientWithResponses(ex.base, oapi.WithHTTPClient(r.httpClient()), oapi.WithRequestEditorFn(apiKey(ordersKey)))
	if err != nil {
		t.Fatal(err)
	}
	body := func(s string) oapi.PostOrdersJSONRequestBody {
		var b oapi.PostOrdersJSONRequestBody
		if err := json.Unmarshal([]byte(s), &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	post := func(ctx context.Context, key, order string) *oapi.PostOrdersResponse {
		res, err := c.PostOrdersWithResponse(ctx, &oapi.PostOrdersParams{XTenantID: ordersTenant, IdempotencyKey: key}, body(order))
		r.oapi("postOrders", res, err)
		return res
	}
	getByID := func(ctx context.Context, id string) *oapi.GetOrdersByIdResponse {
		res, err := c.GetOrdersByIdWithResponse(ctx, id, &oapi.GetOrdersByIdParams{XTenantID: ordersTenant})
		r.oapi("getOrdersById", res, err)
		return res
	}
	list := func(ctx context.Context, p oapi.GetOrdersParams) *oapi.GetOrdersResponse {
		p.XTenantID = ordersTenant
		res, err := c.GetOrdersWithResponse(ctx, &p)
		r.oapi("getOrders", res, err)
		return res
	}

	ex.control("hold")
	done := make(chan *oapi.PostOrdersResponse)
	go func() { done <- post(ctx, "k-slow", validOrder) }()
	ex.control("claimed")
	post(ctx, "k-slow", validOrder)
	post(ctx, "k-other", validOrder)
	ex.control("release")
	<-done

	res := post(ctx, "k-1", validOrder)
	if res.JSON201 == nil || len(res.JSON201.Lines) == 0 || res.JSON201.Lines[0].Sku != "BOOK-1" {
		t.Fatalf("oapi-codegen: POST /orders = %d %s", res.StatusCode(), res.Body)
	}
	id := res.JSON201.Id
	post(ctx, "k-1", validOrder)
	post(ctx, "k-1", otherOrder)
	// The client's own types refuse an invalid email, so the invalid
	// order goes as raw JSON; the answer is decoded the same way.
	invalid, err := c.PostOrdersWithBodyWithResponse(ctx, &oapi.PostOrdersParams{XTenantID: ordersTenant, IdempotencyKey: "k-2"},
		"application/json", strings.NewReader(invalidOrder))
	r.oapi("postOrders", invalid, err)
	if res := invalid; err == nil && res.JSON422 != nil {
		v, err := res.JSON422.Error.AsPostOrders422ErrorFxValidationError()
		if err != nil || len(v.Details.Issues) != 4 {
			t.Errorf("oapi-codegen: the 422's issues = %+v, %v; want 4", v.Details.Issues, err)
		}
	}
	post(withEdit(ctx, without("Idempotency-Key")), "", validOrder)
	post(withEdit(ctx, overLimit), "k-3", validOrder)

	if got := getByID(ctx, id); got.JSON200 == nil || got.JSON200.Id != id {
		t.Errorf("oapi-codegen: GET /orders/%s = %d %s", id, got.StatusCode(), got.Body)
	}
	getByID(ctx, "ord_999")
	getByID(ctx, "42")

	open := oapi.GetOrdersParamsStatusOpen
	if got := list(ctx, oapi.GetOrdersParams{Status: &open}); got.JSON200 == nil || len(got.JSON200.Orders) != 2 {
		t.Errorf("oapi-codegen: GET /orders?status=open = %d %s", got.StatusCode(), got.Body)
	}
	limit := int64(500)
	list(ctx, oapi.GetOrdersParams{Limit: &limit})

	for _, edit := range append(guards, everyOperation...) {
		post(withEdit(ctx, edit), "k-4", validOrder)
		getByID(withEdit(ctx, edit), id)
		list(withEdit(ctx, edit), oapi.GetOrdersParams{})
	}
	for range untilLimited {
		if list(ctx, oapi.GetOrdersParams{}).JSON429 != nil {
			break
		}
	}
	getByID(ctx, id)
	post(ctx, "k-5", validOrder)
}
