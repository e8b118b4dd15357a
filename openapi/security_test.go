package openapi_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/jwt"
)

// securityOf is an operation's security requirements, each written as its
// scheme names joined by "+" ("" for the empty requirement).
func securityOf(t *testing.T, op any) []string {
	t.Helper()
	var out []string
	for _, req := range get(t, op, "security").([]any) {
		var names []string
		for n, scopes := range req.(map[string]any) {
			if s, ok := scopes.([]any); !ok || len(s) != 0 {
				t.Errorf("scopes of %s: %v", n, scopes)
			}
			names = append(names, n)
		}
		slices.Sort(names)
		s := ""
		for i, n := range names {
			if i > 0 {
				s += "+"
			}
			s += n
		}
		out = append(out, s)
	}
	return out
}

// TestGenerateSecurity: the auth middleware guarding a route become its
// security requirements (any accepted credential; the empty requirement
// when Auth is Optional and nothing requires an identity) and
// components.securitySchemes; the tenant header becomes a parameter;
// unguarded routes need nothing; a third-party middleware declares its
// own scheme and parameter the same way.
func TestGenerateSecurity(t *testing.T) {
	app := fx.New()
	jwtv, err := jwt.NewVerifier(jwt.Config{Algorithms: []string{"HS256"}, Key: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{"key-0123456789abcdef": {Subject: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	ok := func(c *fx.Ctx) error { return nil }
	app.Get("/public", ok)
	both := app.Group("/both", middleware.Auth(middleware.AuthConfig{Bearer: jwtv, APIKeys: keys}),
		middleware.Tenant(middleware.TenantConfig{Required: true}))
	both.Get("/x", ok)
	optional := app.Group("/optional", middleware.Auth(middleware.AuthConfig{APIKeys: keys, APIKeyHeader: "X-Org-Key", Optional: true}))
	optional.Get("/anyone", ok)
	optional.Route(fx.Route{Method: "GET", Path: "/signed-in", Handler: ok, Middleware: []fx.Middleware{middleware.RequireRoles()}})
	partner := fx.Declare(func(c *fx.Ctx, next fx.Next) error { return next() }, fx.Declaration{
		Errors:     []*fx.Error{fx.NewCatalogError(fx.ErrorCodes.Unauthenticated, "x")},
		Security:   []fx.SecuritySchemeDoc{{Name: middleware.APIKeySchemeName, Type: "apiKey", In: "query", Param: "partner_key"}},
		Parameters: []fx.ParameterDoc{{Name: "X-Region", In: "header", Required: true}, {Name: "x-tenant-id", In: "header"}},
	})
	app.Route(fx.Route{Method: "GET", Path: "/partner", Handler: ok, Middleware: []fx.Middleware{
		middleware.Auth(middleware.AuthConfig{Bearer: jwtv}), partner, middleware.Tenant(middleware.TenantConfig{}),
	}})
	type in struct {
		Tenant string `header:"X-Tenant-ID,required"`
	}
	fx.Op(app.Group("/own", middleware.Tenant(middleware.TenantConfig{})), "GET", "/y", func(c *fx.Ctx, _ *in) (*struct{}, error) { return nil, nil })

	doc := generate(t, app)
	paths := get(t, doc, "paths")
	for path, want := range map[string][]string{
		"/public":             {},
		"/both/x":             {"bearerAuth", "apiKeyAuth"},
		"/optional/anyone":    {"", "apiKeyAuth2"},
		"/optional/signed-in": {"apiKeyAuth2"},
		"/partner":            {"apiKeyAuth3+bearerAuth"},
	} {
		if got := securityOf(t, get(t, paths, path, "get")); !slices.Equal(got, want) {
			t.Errorf("GET %s security %q, want %q", path, got, want)
		}
	}
	// Distinct schemes under one name are numbered in route order.
	schemes := get(t, doc, "components", "securitySchemes").(map[string]any)
	if got := keysOf(schemes); !slices.Equal(got, []string{"apiKeyAuth", "apiKeyAuth2", "apiKeyAuth3", "bearerAuth"}) {
		t.Fatalf("securitySchemes %v", got)
	}
	want := map[string]map[string]any{
		"bearerAuth":  {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
		"apiKeyAuth":  {"type": "apiKey", "in": "header", "name": "X-API-Key"},
		"apiKeyAuth2": {"type": "apiKey", "in": "header", "name": "X-Org-Key"},
		"apiKeyAuth3": {"type": "apiKey", "in": "query", "name": "partner_key"},
	}
	for n, fields := range want {
		for k, v := range fields {
			if got := get(t, schemes, n, k); got != v {
				t.Errorf("%s.%s = %v, want %v", n, k, got, v)
			}
		}
	}

	params := func(path string) string {
		b, _ := json.Marshal(get(t, paths, path, "get", "parameters"))
		return string(b)
	}
	if got, want := params("/both/x"), `[{"description":"The tenant the request is for.","in":"header","name":"X-Tenant-ID","required":true,"schema":{"pattern":"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$","type":"string"}}]`; got != want {
		t.Errorf("tenant parameter\n got %s\nwant %s", got, want)
	}
	// The partner's parameters, then Tenant's X-Tenant-ID: it repeats the
	// partner's x-tenant-id (header names are case-insensitive).
	if got, want := params("/partner"), `[{"in":"header","name":"X-Region","required":true,"schema":{"type":"string"}},{"in":"header","name":"x-tenant-id","schema":{"type":"string"}}]`; got != want {
		t.Errorf("declared parameters\n got %s\nwant %s", got, want)
	}
	// The operation's own header parameter wins over the declared one.
	if got, want := params("/own/y"), `[{"in":"header","name":"X-Tenant-ID","required":true,"schema":{"type":"string"}}]`; got != want {
		t.Errorf("own parameter\n got %s\nwant %s", got, want)
	}
}
