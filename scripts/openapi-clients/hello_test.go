package clients_test

import (
	"context"
	"encoding/json"
	"testing"

	oapi "github.com/fxhq/fx/scripts/openapi-clients/gen/oapi/hello"
	ogen "github.com/fxhq/fx/scripts/openapi-clients/gen/ogen/hello"
)

// helloKey is the API key GET /me of examples/hello accepts.
const helloKey = "fx-demo-key-not-a-secret"

const (
	helloOrder   = `{"customer":"Ada","items":[{"sku":"A-1","qty":2}]}`
	helloInvalid = `{"customer":"","items":[{"sku":"A-1","qty":2},{"sku":"","qty":0}]}`
)

type helloSec struct{}

func (helloSec) ApiKeyAuth(context.Context, ogen.OperationName) (ogen.ApiKeyAuth, error) {
	return ogen.ApiKeyAuth{APIKey: helloKey}, nil
}

func helloOgen(t *testing.T, ex example, r *recorder) {
	ctx := context.Background()
	c, err := ogen.NewClient(ex.base, helloSec{}, ogen.WithClient(r.httpClient()))
	if err != nil {
		t.Fatal(err)
	}
	index, err := c.Get(ctx, ogen.GetParams{})
	r.ogen("get", index, err)
	hello, err := c.GetHello(ctx, ogen.GetHelloParams{})
	r.ogen("getHello", hello, err)
	for _, ctx := range []context.Context{ctx, withEdit(ctx, without("X-API-Key"))} {
		me, err := c.GetMe(ctx, ogen.GetMeParams{})
		r.ogen("getMe", me, err)
	}
	for _, id := range []string{"7", "missing"} {
		res, err := c.GetUsersById(ctx, ogen.GetUsersByIdParams{ID: id})
		r.ogen("getUsersById", res, err)
	}
	order := func(ctx context.Context, s string) {
		var b ogen.PostOrdersReq
		if err := b.UnmarshalJSON([]byte(s)); err != nil {
			t.Fatal(err)
		}
		res, err := c.PostOrders(ctx, &b, ogen.PostOrdersParams{})
		r.ogen("postOrders", res, err)
	}
	order(ctx, helloOrder)
	order(ctx, helloInvalid)
	order(withEdit(ctx, overLimit), helloOrder)
}

func helloOapi(t *testing.T, ex example, r *recorder) {
	ctx := context.Background()
	c, err := oapi.NewClientWithResponses(ex.base, oapi.WithHTTPClient(r.httpClient()), oapi.WithRequestEditorFn(apiKey(helloKey)))
	if err != nil {
		t.Fatal(err)
	}
	index, err := c.GetWithResponse(ctx, &oapi.GetParams{})
	r.oapi("get", index, err)
	hello, err := c.GetHelloWithResponse(ctx, &oapi.GetHelloParams{})
	r.oapi("getHello", hello, err)
	for _, ctx := range []context.Context{ctx, withEdit(ctx, without("X-API-Key"))} {
		me, err := c.GetMeWithResponse(ctx, &oapi.GetMeParams{})
		r.oapi("getMe", me, err)
	}
	for _, id := range []string{"7", "missing"} {
		res, err := c.GetUsersByIdWithResponse(ctx, id, &oapi.GetUsersByIdParams{})
		r.oapi("getUsersById", res, err)
	}
	order := func(ctx context.Context, s string) {
		var b oapi.PostOrdersJSONRequestBody
		if err := json.Unmarshal([]byte(s), &b); err != nil {
			t.Fatal(err)
		}
		res, err := c.PostOrdersWithResponse(ctx, &oapi.PostOrdersParams{}, b)
		r.oapi("postOrders", res, err)
	}
	order(ctx, helloOrder)
	order(ctx, helloInvalid)
	order(withEdit(ctx, overLimit), helloOrder)
}
