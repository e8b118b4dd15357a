package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/fxhq/fx/middleware/ratelimit"
	"github.com/fxhq/fx/openapi"
)

// switchStore is a rate-limit store that answers as mode says: allow,
// deny or fail.
type switchStore struct{ mode string }

func (s *switchStore) Allow(context.Context, string, ratelimit.Limit) (ratelimit.Decision, error) {
	switch s.mode {
	case "deny":
		return ratelimit.Decision{RetryAfter: time.Second}, nil
	case "fail":
		return ratelimit.Decision{}, errors.New("store down")
	}
	return ratelimit.Decision{Allowed: true, Remaining: 1}, nil
}

// documentedReasons is the details.reason enum the document gives code
// at status on op (an operation object of doc), following the error
// schema's $refs and oneOf variants; nil when it gives none.
func documentedReasons(t *testing.T, doc map[string]any, op map[string]any, status int, code string) []any {
	t.Helper()
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	deref := func(s map[string]any) map[string]any {
		if r, ok := s["$ref"].(string); ok {
			return schemas[r[len("#/components/schemas/"):]].(map[string]any)
		}
		return s
	}
	resp, _ := op["responses"].(map[string]any)[strconv.Itoa(status)].(map[string]any)
	if resp == nil {
		t.Fatalf("%d is not documented", status)
	}
	env := deref(resp["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any))
	errObj := deref(env["properties"].(map[string]any)["error"].(map[string]any))
	variants := []map[string]any{errObj}
	if one, ok := errObj["oneOf"].([]any); ok {
		variants = nil
		for _, v := range one {
			variants = append(variants, deref(v.(map[string]any)))
		}
	}
	for _, v := range variants {
		props := v["properties"].(map[string]any)
		if !slices.Contains(props["code"].(map[string]any)["enum"].([]any), any(code)) {
			continue
		}
		details, _ := props["details"].(map[string]any)
		if details == nil {
			return nil
		}
		reason, _ := deref(details)["properties"].(map[string]any)["reason"].(map[string]any)
		enum, _ := reason["enum"].([]any)
		return enum
	}
	t.Fatalf("%d documents no %s", status, code)
	return nil
}

// Every reason a first-party middleware can send is in the document: on
// a route behind CORS, Auth, Tenant, RequireRoles, a rate limit and
// idempotency, each failure is provoked through the strict test client
// (which holds each answer's details.reason to the declared reasons of
// its code), and the reason of the answer, and every Reason constant of
// the packages, must be in the enum the document gives details.reason
// at its status and code.
func TestEveryReasonIsDocumented(t *testing.T) {
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{
		"k_admin_0123456789": {Subject: "a", Roles: []string{"admin"}, Tenant: "t1"},
		"k_clerk_0123456789": {Subject: "c", Tenant: "t1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	store := &switchStore{}
	app := fx.New(quiet)
	app.Use(
		middleware.CORS(middleware.CORSConfig{AllowOrigins: []string{"https://app.example.com"}}),
		middleware.Auth(middleware.AuthConfig{APIKeys: keys}),
		middleware.Tenant(middleware.TenantConfig{Required: true, BaseDomain: "example.com", MatchPrincipal: true}),
		middleware.RequireRoles("admin"),
		ratelimit.New(ratelimit.Config{Limit: ratelimit.Limit{Requests: 10, Period: time.Minute}, Store: store}),
		idempotency.New(idempotency.Config{Required: true}),
	)
	app.Route(fx.Route{Method: "POST", Path: "/orders", Responses: []fx.ResponseDoc{{Status: 201}},
		Handler: func(c *fx.Ctx) error { return c.NoContent(201) }})
	doc, err := openapi.Generate(app, openapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	op := doc["paths"].(map[string]any)["/orders"].(map[string]any)["post"].(map[string]any)

	client := fxtest.New(t, app)
	post := func(key string) *fxtest.Request {
		r := client.Post("/orders").Host("api.other.org")
		if key != "" {
			r = r.Header(middleware.DefaultAPIKeyHeader, key)
		}
		return r
	}
	const admin, clerk = "k_admin_0123456789", "k_clerk_0123456789"
	tenant := func(r *fxtest.Request) *fxtest.Request { return r.Header("X-Tenant-ID", "t1") }
	for _, c := range []struct {
		mode   string
		req    *fxtest.Request
		status int
		reason string
	}{
		{"", post(admin).Header("Origin", "https://a.example").Header("Origin", "https://b.example"), 400, middleware.ReasonRepeatedOrigin},
		{"", post(""), 401, middleware.ReasonMissingCredentials},
		{"", post("k_wrong_0123456789"), 401, middleware.ReasonInvalidCredentials},
		{"", post(admin), 400, middleware.ReasonMissingTenant},
		{"", post(admin).Header("X-Tenant-ID", "bad id!"), 400, middleware.ReasonMalformedTenant},
		{"", post(admin).Header("X-Tenant-ID", "t1").Host("t2.example.com"), 400, middleware.ReasonConflictingTenant},
		{"", post(admin).Header("X-Tenant-ID", "t2"), 403, middleware.ReasonTenantMismatch},
		{"", tenant(post(clerk)), 403, middleware.ReasonMissingRole},
		{"fail", tenant(post(admin)), 503, ratelimit.ReasonUnavailable},
		{"deny", tenant(post(admin)), 429, ratelimit.ReasonRateLimited},
		{"", tenant(post(admin)), 400, idempotency.ReasonMissingKey},
		{"", tenant(post(admin)).Header(idempotency.HeaderKey, "a b"), 400, idempotency.ReasonMalformedKey},
	} {
		store.mode = c.mode
		resp := c.req.Do()
		env := resp.Envelope()
		var d middleware.FailureDetails
		_ = json.Unmarshal(env.Details, &d)
		if resp.Status != c.status || d.Reason != c.reason {
			t.Errorf("%s: %d %s, want %d reason %s", c.req, resp.Status, resp.Body, c.status, c.reason)
			continue
		}
		if enum := documentedReasons(t, doc, op, resp.Status, env.Code); !slices.Contains(enum, any(d.Reason)) {
			t.Errorf("%s: answered %d %s reason %s; the document's reasons: %v", c.req, resp.Status, env.Code, d.Reason, enum)
		}
	}

	// Every reason the packages name, at its status and code.
	for _, c := range []struct {
		status  int
		code    string
		reasons []string
	}{
		{401, fx.ErrorCodes.Unauthenticated, []string{middleware.ReasonMissingCredentials, middleware.ReasonMalformedCredentials,
			middleware.ReasonUnsupportedScheme, middleware.ReasonMultipleCredentials, middleware.ReasonCredentialsTooLong,
			middleware.ReasonInvalidCredentials, middleware.ReasonExpired, middleware.ReasonNotYetValid, middleware.ReasonInvalidClaims}},
		{403, fx.ErrorCodes.Forbidden, []string{middleware.ReasonMissingRole, middleware.ReasonMissingPermission, middleware.ReasonTenantMismatch}},
		{400, fx.ErrorCodes.TenantRequired, []string{middleware.ReasonMissingTenant, middleware.ReasonMalformedTenant}},
		{400, fx.ErrorCodes.BadRequest, []string{middleware.ReasonConflictingTenant, middleware.ReasonRepeatedOrigin}},
		{429, fx.ErrorCodes.RateLimited, []string{ratelimit.ReasonRateLimited}},
		{503, fx.ErrorCodes.ServiceUnavailable, []string{ratelimit.ReasonUnavailable, idempotency.ReasonUnavailable}},
		{400, fx.ErrorCodes.IdempotencyKeyRequired, []string{idempotency.ReasonMissingKey, idempotency.ReasonMalformedKey}},
		{409, fx.ErrorCodes.IdempotencyInFlight, []string{idempotency.ReasonInFlight}},
		{422, fx.ErrorCodes.IdempotencyKeyReused, []string{idempotency.ReasonKeyReused}},
	} {
		enum := documentedReasons(t, doc, op, c.status, c.code)
		for _, r := range c.reasons {
			if !slices.Contains(enum, any(r)) {
				t.Errorf("%d %s: reason %s is not in the document's %v", c.status, c.code, r, enum)
			}
		}
		if len(enum) != len(c.reasons) {
			t.Errorf("%d %s: the document's reasons %v, want %v", c.status, c.code, enum, c.reasons)
		}
	}
}
