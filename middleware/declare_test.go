package middleware_test

import (
	"slices"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware"
)

// TestMiddlewareDeclareErrors: each guard declares the codes it can raise
// (fx.Declare), so documentation lists them on the routes it guards.
func TestMiddlewareDeclareErrors(t *testing.T) {
	codes := func(mw fx.Middleware) []string {
		var out []string
		for _, e := range fx.Declared(mw) {
			if s, _ := fx.StatusOf(e.Code); s != e.Status {
				t.Errorf("%s declared with status %d", e.Code, e.Status)
			}
			out = append(out, e.Code)
		}
		return out
	}
	for name, c := range map[string]struct {
		mw   fx.Middleware
		want []string
	}{
		"Auth":                  {middleware.Auth(middleware.AuthConfig{APIKeys: apiKeys(t)}), []string{fx.CodeUnauthenticated}},
		"RequireRoles":          {middleware.RequireRoles("admin"), []string{fx.CodeUnauthenticated, fx.CodeForbidden}},
		"RequirePermissions":    {middleware.RequirePermissions("x"), []string{fx.CodeUnauthenticated, fx.CodeForbidden}},
		"Tenant":                {middleware.Tenant(middleware.TenantConfig{Required: true}), []string{fx.CodeTenantRequired}},
		"Tenant+Match":          {middleware.Tenant(middleware.TenantConfig{MatchPrincipal: true}), []string{fx.CodeTenantRequired, fx.CodeUnauthenticated, fx.CodeForbidden}},
		"Tenant+Subdomain":      {middleware.Tenant(middleware.TenantConfig{BaseDomain: "api.example.com"}), []string{fx.CodeTenantRequired, fx.CodeBadRequest}},
		"Tenant subdomain only": {middleware.Tenant(middleware.TenantConfig{Header: "-", BaseDomain: "api.example.com"}), []string{fx.CodeTenantRequired}},
		"Timeout":               {middleware.Timeout(time.Second), []string{fx.CodeTimeout}},
	} {
		if got := codes(c.mw); !slices.Equal(got, c.want) {
			t.Errorf("%s declares %v, want %v", name, got, c.want)
		}
	}
}

// TestAuthDeclaresSecurity: Auth declares one security scheme per
// credential it accepts (bearer tokens with the format their verifier
// states through BearerFormatter — JWT for package middleware/jwt's —, the
// API key in its configured header), and whether anonymous requests get
// through; RequireRoles cancels that.
func TestAuthDeclaresSecurity(t *testing.T) {
	jwtBearer := fx.SecurityScheme{Name: middleware.BearerSchemeName, Type: "http", Scheme: "bearer", BearerFormat: "JWT"}
	bearer := fx.SecurityScheme{Name: middleware.BearerSchemeName, Type: "http", Scheme: "bearer"}
	paseto := fx.SecurityScheme{Name: middleware.BearerSchemeName, Type: "http", Scheme: "bearer", BearerFormat: "PASETO"}
	key := fx.SecurityScheme{Name: middleware.APIKeySchemeName, Type: "apiKey", In: "header", Param: "X-Org-Key"}
	custom := middleware.VerifierFunc(func(*fx.Ctx, string) (*middleware.Principal, error) { return nil, middleware.ErrInvalidCredential })
	for name, c := range map[string]struct {
		cfg  middleware.AuthConfig
		want []fx.SecurityScheme
	}{
		"JWT and API key": {middleware.AuthConfig{Bearer: kittest.HSVerifier(), APIKeys: apiKeys(t), APIKeyHeader: "X-Org-Key", Optional: true}, []fx.SecurityScheme{jwtBearer, key}},
		"opaque bearer":   {middleware.AuthConfig{Bearer: custom}, []fx.SecurityScheme{bearer}},
		"stated format":   {middleware.AuthConfig{Bearer: formatted{custom, "PASETO"}}, []fx.SecurityScheme{paseto}},
		"empty format":    {middleware.AuthConfig{Bearer: formatted{custom, ""}}, []fx.SecurityScheme{bearer}},
	} {
		d := fx.DeclarationOf(middleware.Auth(c.cfg))
		got := d.Security
		for i := range got {
			if got[i].Description == "" {
				t.Errorf("%s: scheme %s has no description", name, got[i].Name)
			}
			got[i].Description = ""
		}
		if !slices.Equal(got, c.want) || d.Anonymous != c.cfg.Optional || d.RequiresIdentity {
			t.Errorf("%s: %+v, want %+v (Anonymous %v)", name, d, c.want, c.cfg.Optional)
		}
	}
	for _, mw := range []fx.Middleware{middleware.RequireRoles(), middleware.RequirePermissions("x")} {
		if d := fx.DeclarationOf(mw); !d.RequiresIdentity || len(d.Security) != 0 {
			t.Errorf("Require*: %+v", d)
		}
	}
}

// formatted is a custom Verifier stating its bearer format.
type formatted struct {
	middleware.Verifier
	format string
}

func (f formatted) BearerFormat() string { return f.format }

// TestTenantDeclaresHeader: Tenant declares the header it reads as a
// parameter, required when it alone can name a Required tenant, with the
// default ID pattern unless Validate replaces it.
func TestTenantDeclaresHeader(t *testing.T) {
	param := func(cfg middleware.TenantConfig) []fx.Parameter {
		return fx.DeclarationOf(middleware.Tenant(cfg)).Parameters
	}
	p := param(middleware.TenantConfig{Required: true})
	if len(p) != 1 || p[0].Name != "X-Tenant-ID" || p[0].In != "header" || !p[0].Required ||
		p[0].Schema["pattern"] != "^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$" {
		t.Errorf("default: %+v", p)
	}
	if p := param(middleware.TenantConfig{Required: true, Header: "X-Org", BaseDomain: "api.example.com", Validate: func(string) bool { return true }}); len(p) != 1 ||
		p[0].Name != "X-Org" || p[0].Required || p[0].Schema["pattern"] != nil {
		t.Errorf("header or subdomain, custom IDs: %+v", p)
	}
	if p := param(middleware.TenantConfig{Header: "-", BaseDomain: "api.example.com"}); len(p) != 0 {
		t.Errorf("subdomain only: %+v", p)
	}
}
