//go:build clients

package live

import (
	"context"
	"testing"

	oapi "github.com/fxhq/fx/scripts/openapi-clients/gen/oapi/openapi"
	ogen "github.com/fxhq/fx/scripts/openapi-clients/gen/ogen/openapi"
	"github.com/ogen-go/ogen/ogenerrors"
)

// The admin API key examples/openapi ships with, and its tenant.
const (
	adminKey    = "ak_demo_admin_0123456789"
	adminTenant = "acme"
)

type openapiSec struct{}

func (openapiSec) ApiKeyAuth(context.Context, ogen.OperationName) (ogen.ApiKeyAuth, error) {
	return ogen.ApiKeyAuth{APIKey: adminKey}, nil
}

// BearerAuth: the API key alone authenticates (the document accepts
// either).
func (openapiSec) BearerAuth(context.Context, ogen.OperationName) (ogen.BearerAuth, error) {
	return ogen.BearerAuth{}, ogenerrors.ErrSkipClientSecurity
}

func openapiOgen(t *testing.T, ex example, r *recorder) {
	ctx := context.Background()
	c, err := ogen.NewClient(ex.base, openapiSec{}, ogen.WithClient(r.httpClient()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.PostUsers(ctx, &ogen.PostUsersReq{Name: "Ada", Email: "ada@example.com"})
	r.ogen("postUsers", res, err)
	if u, ok := res.(*ogen.PostUsersCreated); !ok || u.Name != "Ada" {
		t.Errorf("ogen: POST /users = %#v", res)
	}
	res, err = c.PostUsers(ctx, &ogen.PostUsersReq{Name: "", Email: "nope"})
	r.ogen("postUsers", res, err)
	res, err = c.PostUsers(withEdit(ctx, overLimit), &ogen.PostUsersReq{Name: "Ada", Email: "ada@example.com"})
	r.ogen("postUsers", res, err)

	for _, id := range []string{"u1", "u2"} {
		res, err := c.GetUsersById(ctx, ogen.GetUsersByIdParams{ID: id})
		r.ogen("getUsersById", res, err)
	}
	for _, ctx := range guarded(ctx) {
		res, err := c.GetAdminStats(ctx, ogen.GetAdminStatsParams{XTenantID: adminTenant})
		r.ogen("getAdminStats", res, err)
	}
	probes(ex, func() {
		res, err := c.GetLivez(ctx)
		r.ogen("getLivez", res, err)
	}, func() {
		res, err := c.GetReadyz(ctx)
		r.ogen("getReadyz", res, err)
	})

	// Every operation, with a request it accepts, under each edit every
	// operation answers alike.
	for _, edit := range everyOperation {
		ctx := withEdit(ctx, edit)
		res, err := c.PostUsers(ctx, &ogen.PostUsersReq{Name: "Ada", Email: "ada@example.com"})
		r.ogen("postUsers", res, err)
		user, err := c.GetUsersById(ctx, ogen.GetUsersByIdParams{ID: "u1"})
		r.ogen("getUsersById", user, err)
		stats, err := c.GetAdminStats(ctx, ogen.GetAdminStatsParams{XTenantID: adminTenant})
		r.ogen("getAdminStats", stats, err)
		live, err := c.GetLivez(ctx)
		r.ogen("getLivez", live, err)
		ready, err := c.GetReadyz(ctx)
		r.ogen("getReadyz", ready, err)
	}
}

func openapiOapi(t *testing.T, ex example, r *recorder) {
	ctx := context.Background()
	c, err := oapi.NewClientWithResponses(ex.base, oapi.WithHTTPClient(r.httpClient()), oapi.WithRequestEditorFn(apiKey(adminKey)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.PostUsersWithResponse(ctx, oapi.PostUsersJSONRequestBody{Name: "Ada", Email: "ada@example.com"})
	r.oapi("postUsers", res, err)
	if err == nil && (res.JSON201 == nil || res.JSON201.Name != "Ada") {
		t.Errorf("oapi-codegen: POST /users = %d %s", res.StatusCode(), res.Body)
	}
	res, err = c.PostUsersWithResponse(ctx, oapi.PostUsersJSONRequestBody{Name: "", Email: "nope"})
	r.oapi("postUsers", res, err)
	res, err = c.PostUsersWithResponse(withEdit(ctx, overLimit), oapi.PostUsersJSONRequestBody{Name: "Ada", Email: "ada@example.com"})
	r.oapi("postUsers", res, err)

	for _, id := range []string{"u1", "u2"} {
		res, err := c.GetUsersByIdWithResponse(ctx, id)
		r.oapi("getUsersById", res, err)
	}
	for _, ctx := range guarded(ctx) {
		res, err := c.GetAdminStatsWithResponse(ctx, &oapi.GetAdminStatsParams{XTenantID: adminTenant})
		r.oapi("getAdminStats", res, err)
	}
	probes(ex, func() {
		res, err := c.GetLivezWithResponse(ctx)
		r.oapi("getLivez", res, err)
	}, func() {
		res, err := c.GetReadyzWithResponse(ctx)
		r.oapi("getReadyz", res, err)
	})

	for _, edit := range everyOperation {
		ctx := withEdit(ctx, edit)
		res, err := c.PostUsersWithResponse(ctx, oapi.PostUsersJSONRequestBody{Name: "Ada", Email: "ada@example.com"})
		r.oapi("postUsers", res, err)
		user, err := c.GetUsersByIdWithResponse(ctx, "u1")
		r.oapi("getUsersById", user, err)
		stats, err := c.GetAdminStatsWithResponse(ctx, &oapi.GetAdminStatsParams{XTenantID: adminTenant})
		r.oapi("getAdminStats", stats, err)
		live, err := c.GetLivezWithResponse(ctx)
		r.oapi("getLivez", live, err)
		ready, err := c.GetReadyzWithResponse(ctx)
		r.oapi("getReadyz", ready, err)
	}
}

// probes calls the liveness and readiness operations, then readiness again
// while the example's user store is unreachable (its 503).
func probes(ex example, live, ready func()) {
	live()
	ready()
	ex.control("down")
	ready()
	ex.control("up")
}
