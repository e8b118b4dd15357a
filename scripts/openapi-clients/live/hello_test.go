//go:build clients

package live

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
	order := func(ctx context.Context, s string) {
		var b ogen.PostOrdersReq
		if err := b.UnmarshalJSON([]byte(s)); err != nil {
			t.Fatal(err)
		}
		res, err := c.PostOrders(ctx, &b, ogen.PostOrdersParams{})
		r.ogen("postOrders", res, err)
	}
	// each calls every operation with a request it accepts.
	each := func(ctx context.Context) {
		index, err := c.Get(ctx, ogen.GetParams{})
		r.ogen("get", index, err)
		hello, err := c.GetHello(ctx, ogen.GetHelloParams{})
		r.ogen("getHello", hello, err)
		me, err := c.GetMe(ctx, ogen.GetMeParams{})
		r.ogen("getMe", me, err)
		user, err := c.GetUsersById(ctx, ogen.GetUsersByIdParams{ID: "7"})
		r.ogen("getUsersById", user, err)
		order(ctx, helloOrder)
	}
	each(ctx)
	me, err := c.GetMe(withEdit(ctx, without("X-API-Key")), ogen.GetMeParams{})
	r.ogen("getMe", me, err)
	user, err := c.GetUsersById(ctx, ogen.GetUsersByIdParams{ID: "missing"})
	r.ogen("getUsersById", user, err)
	order(ctx, helloInvalid)
	order(withEdit(ctx, overLimit), helloOrder)
	for _, edit := range everyOperation {
		each(withEdit(ctx, edit))
	}
}

func helloOapi(t *testing.T, ex example, r *recorder) {
	ctx := context.Background()
	c, err := oapi.NewClientWithResponses(ex.base, oapi.WithHTTPClient(r.httpClient()), oapi.WithRequestEditorFn(apiKey(helloKey)))
	if err != nil {
		t.Fatal(err)
	}
	order := func(ctx context.Context, s string) {
		var b oapi.PostOrdersJSONRequestBody
		if err := json.Unmarshal([]byte(s), &b); err != nil {
			t.Fatal(err)
		}
		res, err := c.PostOrdersWithResponse(ctx, &oapi.PostOrdersParams{}, b)
		r.oapi("postOrders", res, err)
	}
	each := func(ctx context.Context) {
		index, err := c.GetWithResponse(ctx, &oapi.GetParams{})
		r.oapi("get", index, err)
		hello, err := c.GetHelloWithResponse(ctx, &oapi.GetHelloParams{})
		r.oapi("getHello", hello, err)
		me, err := c.GetMeWithResponse(ctx, &oapi.GetMeParams{})
		r.oapi("getMe", me, err)
		user, err := c.GetUsersByIdWithResponse(ctx, "7", &oapi.GetUsersByIdParams{})
		r.oapi("getUsersById", user, err)
		order(ctx, helloOrder)
	}
	each(ctx)
	me, err := c.GetMeWithResponse(withEdit(ctx, without("X-API-Key")), &oapi.GetMeParams{})
	r.oapi("getMe", me, err)
	user, err := c.GetUsersByIdWithResponse(ctx, "missing", &oapi.GetUsersByIdParams{})
	r.oapi("getUsersById", user, err)
	order(ctx, helloInvalid)
	order(withEdit(ctx, overLimit), helloOrder)
	for _, edit := range everyOperation {
		each(withEdit(ctx, edit))
	}
}
