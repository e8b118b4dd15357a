package middleware_test

import (
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest/jwtkit"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
)

func tenantApp(t *testing.T, cfg middleware.TenantConfig) *fx.App {
	t.Helper()
	app := fx.New()
	app.Use(middleware.Tenant(cfg))
	app.Get("/t", whoami)
	return app
}

// injections are tenant header values that must never reach a handler.
var injections = []string{
	"acme;drop table tenants",
	"acme' OR '1'='1",
	`acme"}`,
	"../etc/passwd",
	"acme/../../beta",
	"<script>alert(1)</script>",
	"acme%0d%0aX-Evil: 1",
	"acme\tbeta",
	"acme beta",
	"acme.beta",
	"-acme",
	"_acme",
	"acmé",
	"\u202eemca",
	"acme\x00",
	"${jndi:ldap://x}",
	strings.Repeat("a", middleware.MaxTenantIDLength+1),
	strings.Repeat("a", 8<<10/2),
}

func TestTenantHeader(t *testing.T) {
	req := tenantApp(t, middleware.TenantConfig{Required: true})
	opt := tenantApp(t, middleware.TenantConfig{})

	for _, id := range []string{"acme", "Acme-EU", "a", "t_1", "123e4567-e89b-12d3-a456-426614174000", strings.Repeat("a", 63)} {
		r := do(t, req, "GET", "/t", map[string]string{"X-Tenant-ID": id})
		if r.status != 200 || r.body["tenant"] != id {
			t.Errorf("valid %q: %d %s", id, r.status, r.raw)
		}
	}

	r := do(t, req, "GET", "/t", nil)
	expectError(t, r, 400, fx.ErrorCodes.TenantRequired, "missing_tenant")
	if !strings.Contains(r.msg, "X-Tenant-ID") {
		t.Errorf("message %q does not say what to send", r.msg)
	}
	if r := do(t, opt, "GET", "/t", nil); r.status != 200 || r.body["tenant"] != nil {
		t.Errorf("optional, absent: %d %s", r.status, r.raw)
	}

	for _, bad := range injections {
		t.Run(strings.ToValidUTF8(bad[:min(len(bad), 24)], "?"), func(t *testing.T) {
			r := do(t, req, "GET", "/t", map[string]string{"X-Tenant-ID": bad})
			switch r.code { // fx's transport refuses some before any middleware runs
			case fx.ErrorCodes.HeadersTooLarge: // over the App's HeaderLimit
				expectError(t, r, 431, r.code, "")
				return
			case fx.ErrorCodes.BadRequest: // bytes fasthttp does not parse (NUL)
				expectError(t, r, 400, r.code, "")
				return
			}
			expectError(t, r, 400, fx.ErrorCodes.TenantRequired, "malformed_tenant")
			if len(bad) > 3 && strings.Contains(r.raw, bad) {
				t.Fatalf("the response echoes the value: %s", r.raw)
			}
			r = do(t, opt, "GET", "/t", map[string]string{"X-Tenant-ID": bad})
			if r.status != 200 || r.body["tenant"] != nil {
				t.Fatalf("optional: a malformed ID reached the handler: %d %s", r.status, r.raw)
			}
		})
	}
}

func TestTenantSubdomain(t *testing.T) {
	app := tenantApp(t, middleware.TenantConfig{BaseDomain: "api.example.com", Header: "-"})
	withHdr := tenantApp(t, middleware.TenantConfig{BaseDomain: ".API.example.com."})
	for _, c := range []struct {
		host string
		want string // "" = no tenant
	}{
		{"acme.api.example.com", "acme"},
		{"acme.api.example.com:8443", "acme"},
		{"ACME.Api.Example.COM", "acme"},
		{"acme.api.example.com.", "acme"},
		{"acme-eu.api.example.com", "acme-eu"},
		{"api.example.com", ""},
		{"api.example.com:443", ""},
		{"www.api.example.com", ""},
		{"WWW.api.example.com", ""},
		{"a.b.api.example.com", ""},
		{"evilapi.example.com", ""},
		{"acme.example.com", ""},
		{"acme.api.example.com.evil.net", ""},
		{"127.0.0.1", ""},
		{"127.0.0.1:8080", ""},
		{"[::1]:8080", ""},
		{"[::1]", ""},
		{"localhost", ""},
		{"-acme.api.example.com", ""},
	} {
		for _, a := range []*fx.App{app, withHdr} {
			r := do(t, a, "GET", "/t", map[string]string{"Host": c.host})
			got, _ := r.body["tenant"].(string)
			if r.status != 200 || got != c.want {
				t.Errorf("host %q: %d %s, want tenant %q", c.host, r.status, r.raw, c.want)
			}
		}
	}

	reqd := tenantApp(t, middleware.TenantConfig{Required: true, BaseDomain: "api.example.com", Reserved: []string{"www", "admin"}})
	for _, host := range []string{"api.example.com", "admin.api.example.com", "127.0.0.1:8080"} {
		r := do(t, reqd, "GET", "/t", map[string]string{"Host": host})
		expectError(t, r, 400, fx.ErrorCodes.TenantRequired, "missing_tenant")
	}
	expectError(t, do(t, reqd, "GET", "/t", map[string]string{"Host": "-x.api.example.com"}),
		400, fx.ErrorCodes.TenantRequired, "malformed_tenant")

	// Header and subdomain together.
	for _, c := range []struct {
		host, hdr string
		status    int
		want      string
	}{
		{"acme.api.example.com", "acme", 200, "acme"},
		{"api.example.com", "beta", 200, "beta"},
		{"acme.api.example.com", "beta", 400, ""},
		{"acme.api.example.com", "ACME", 400, ""}, // IDs are case-sensitive; subdomains are lower-cased
		{"acme.api.example.com", "bad id", 200, "acme"},
	} {
		r := do(t, reqd, "GET", "/t", map[string]string{"Host": c.host, "X-Tenant-ID": c.hdr})
		if c.status == 400 {
			expectError(t, r, 400, fx.ErrorCodes.BadRequest, "conflicting_tenant")
			continue
		}
		if r.status != c.status || r.body["tenant"] != c.want {
			t.Errorf("host %q header %q: %d %s", c.host, c.hdr, r.status, r.raw)
		}
	}
}

func TestTenantCustomValidate(t *testing.T) {
	app := tenantApp(t, middleware.TenantConfig{Required: true, Header: "X-Org", Validate: func(id string) bool {
		return strings.HasPrefix(id, "org_") && middleware.ValidTenantID(id)
	}})
	if r := do(t, app, "GET", "/t", map[string]string{"X-Org": "org_42"}); r.status != 200 || r.body["tenant"] != "org_42" {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	expectError(t, do(t, app, "GET", "/t", map[string]string{"X-Org": "acme"}), 400, fx.ErrorCodes.TenantRequired, "malformed_tenant")
	expectError(t, do(t, app, "GET", "/t", map[string]string{"X-Tenant-ID": "org_42"}), 400, fx.ErrorCodes.TenantRequired, "missing_tenant")
}

// TestTenantSubdomainDepth: only the label directly under the base domain
// names a tenant, even for a validator that would accept dots.
func TestTenantSubdomainDepth(t *testing.T) {
	app := tenantApp(t, middleware.TenantConfig{BaseDomain: "api.example.com", Header: "-",
		Validate: func(string) bool { return true }})
	for host, want := range map[string]string{
		"acme.api.example.com":     "acme",
		"a.b.api.example.com":      "",
		"10.0.0.1.api.example.com": "",
		"[::1]:443":                "",
	} {
		r := do(t, app, "GET", "/t", map[string]string{"Host": host})
		if got, _ := r.body["tenant"].(string); r.status != 200 || got != want {
			t.Errorf("host %q: %d %s, want %q", host, r.status, r.raw, want)
		}
	}
}

func TestTenantMatchPrincipal(t *testing.T) {
	app := fx.New()
	app.Use(
		middleware.Auth(middleware.AuthConfig{Bearer: jwtkit.HSVerifier(), APIKeys: apiKeys(t), Optional: true}),
		middleware.Tenant(middleware.TenantConfig{MatchPrincipal: true, BaseDomain: "api.example.com"}),
	)
	app.Get("/t", whoami)
	acme := map[string]string{"Authorization": "Bearer " + jwtkit.Sign(jwttest.Claims{"tenant_id": "acme"}, nil)}
	noClaim := map[string]string{"Authorization": "Bearer " + jwtkit.Sign(nil, nil)}
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for a, b := range h {
			out[a] = b
		}
		return out
	}

	for _, c := range []struct {
		name    string
		headers map[string]string
		status  int
		reason  string
	}{
		{"same tenant by header", with(acme, "X-Tenant-ID", "acme"), 200, ""},
		{"same tenant by subdomain", with(acme, "Host", "acme.api.example.com"), 200, ""},
		{"API key of the tenant", map[string]string{"X-API-Key": adminKey, "X-Tenant-ID": "acme"}, 200, ""},
		{"no tenant named", acme, 200, ""},
		{"other tenant by header", with(acme, "X-Tenant-ID", "beta"), 403, "tenant_mismatch"},
		{"other tenant by subdomain", with(acme, "Host", "beta.api.example.com"), 403, "tenant_mismatch"},
		{"principal without tenant claim", with(noClaim, "X-Tenant-ID", "acme"), 403, "tenant_mismatch"},
		{"API key without tenant", map[string]string{"X-API-Key": readerKey, "X-Tenant-ID": "acme"}, 403, "tenant_mismatch"},
		{"no principal", map[string]string{"X-Tenant-ID": "acme"}, 401, "missing_credentials"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, app, "GET", "/t", c.headers)
			switch c.status {
			case 200:
				if r.status != 200 {
					t.Fatalf("%d %s", r.status, r.raw)
				}
			case 403:
				expectError(t, r, 403, fx.ErrorCodes.Forbidden, c.reason)
				if strings.Contains(r.msg, "acme") || strings.Contains(r.msg, "beta") {
					t.Fatalf("message names a tenant: %q", r.msg)
				}
			case 401:
				expectError(t, r, 401, fx.ErrorCodes.Unauthenticated, c.reason)
				if r.header.Get("WWW-Authenticate") == "" {
					t.Fatal("401 without a challenge")
				}
			}
		})
	}
}

func TestTenantConfigPanics(t *testing.T) {
	for name, cfg := range map[string]middleware.TenantConfig{
		"no source":  {Header: "-"},
		"bad header": {Header: "X Tenant"},
	} {
		t.Run(name, func(t *testing.T) { expectPanic(t, func() { middleware.Tenant(cfg) }) })
	}
}

func TestValidTenantID(t *testing.T) {
	for _, ok := range []string{"a", "A9", "acme-eu", "t_1", strings.Repeat("z", 63)} {
		if !middleware.ValidTenantID(ok) {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range append([]string{""}, injections...) {
		if middleware.ValidTenantID(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestTenantDeclaresHeader: Tenant declares the header it reads as a
// parameter, required when it alone can name a Required tenant, with the
// default ID pattern unless Validate replaces it.
func TestTenantDeclaresHeader(t *testing.T) {
	param := func(cfg middleware.TenantConfig) []fx.ParameterDoc {
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
