package main

import (
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
)

// TestCurlLines replays the curl lines of the package comment, with
// tokens minted by fxtest with the demo secret.
func TestCurlLines(t *testing.T) {
	app, err := newApp()
	if err != nil {
		t.Fatal(err)
	}
	c := fxtest.New(t, app)
	demo := jwttest.NewSigner(jwttest.HS256, jwttest.SignerConfig{Key: demoSecret(), Issuer: issuer, Audience: audience})
	alice := demo.Token(jwttest.Subject("alice"), jwttest.Roles("admin"), jwttest.Tenant("acme"))
	bob := demo.Token(jwttest.Subject("bob"), jwttest.Roles("viewer"), jwttest.Tenant("globex"), jwttest.Permissions("reports:read"))
	old := demo.Token(jwttest.Subject("carol"), jwttest.ExpiresIn(-time.Hour))
	const key = "ak_demo_reporting_0123456789"
	const unauth, forbidden = "FX_UNAUTHENTICATED", "FX_FORBIDDEN"

	for _, tc := range []struct {
		path    string
		headers []string
		status  int
		code    string // the error code; "" for a success
		want    string // a fragment of the body
	}{
		{"/health", nil, 200, "", `"ok"`},
		{"/me", nil, 401, unauth, "missing_credentials"},
		{"/me", []string{"Authorization", "Bearer"}, 401, unauth, "malformed_credentials"},
		{"/me", []string{"Authorization", "Basic dXNlcjpwYXNz"}, 401, unauth, "unsupported_scheme"},
		{"/me", []string{"Authorization", "Bearer " + old}, 401, unauth, `"expired"`},
		{"/me", []string{"Authorization", "Bearer " + alice + "x"}, 401, unauth, "invalid_credentials"},
		{"/me", []string{"Authorization", "bearer " + alice}, 200, "", `"alice"`},
		{"/me", []string{"X-API-Key", key}, 200, "", `"reporting-job"`},
		{"/me", []string{"X-API-Key", "ak_demo_guess_00000000000"}, 401, unauth, "invalid_credentials"},
		{"/admin/stats", []string{"Authorization", "Bearer " + alice}, 200, "", "42"},
		{"/admin/stats", []string{"Authorization", "Bearer " + bob}, 403, forbidden, "missing_role"},
		{"/reports", []string{"Authorization", "Bearer " + bob}, 200, "", "q1"},
		{"/reports", []string{"X-API-Key", key}, 200, "", "q1"},
		{"/reports", []string{"Authorization", "Bearer " + alice}, 403, forbidden, "missing_permission"},
		{"/t/orders", []string{"Authorization", "Bearer " + alice, "X-Tenant-ID", "acme"}, 200, "", `"acme"`},
		{"/t/orders", []string{"Authorization", "Bearer " + alice, "Host", "acme.api.localhost:8080"}, 200, "", `"acme"`},
		{"/t/orders", []string{"Authorization", "Bearer " + alice, "X-Tenant-ID", "globex"}, 403, forbidden, "tenant_mismatch"},
		{"/t/orders", []string{"Authorization", "Bearer " + alice}, 400, "FX_TENANT_REQUIRED", ""},
		{"/t/orders", []string{"Authorization", "Bearer " + alice, "X-Tenant-ID", "acme;rm"}, 400, "FX_TENANT_REQUIRED", "malformed_tenant"},
		{"/t/orders", []string{"X-Tenant-ID", "acme"}, 401, unauth, "missing_credentials"},
	} {
		req := c.Get(tc.path)
		for i := 0; i+1 < len(tc.headers); i += 2 {
			if tc.headers[i] == "Host" {
				req.Host(tc.headers[i+1])
			} else {
				req.Header(tc.headers[i], tc.headers[i+1])
			}
		}
		r := req.Do()
		if tc.code != "" {
			r.AssertError(tc.status, tc.code)
		} else {
			r.AssertStatus(tc.status)
		}
		if !strings.Contains(string(r.Body), tc.want) {
			t.Errorf("GET %s %v: %s, want %s in it", tc.path, tc.headers[:min(len(tc.headers), 1)], r.Body, tc.want)
		}
	}
}

// The demo tokens the program prints (-token) are accepted as the test's.
func TestMint(t *testing.T) {
	app, err := newApp()
	if err != nil {
		t.Fatal(err)
	}
	c := fxtest.New(t, app)
	for who, status := range map[string]int{"alice": 200, "bob": 200, "expired": 401} {
		tok, err := mint(who)
		if err != nil {
			t.Fatal(err)
		}
		c.Get("/me").Bearer(tok).Do().AssertStatus(status)
	}
	if _, err := mint("mallory"); err == nil {
		t.Error("mint of an unknown user")
	}
}
