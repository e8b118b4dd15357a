package main

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCurlLines replays the curl lines of the package comment.
func TestCurlLines(t *testing.T) {
	app, err := newApp()
	if err != nil {
		t.Fatal(err)
	}
	tok := func(who string) string {
		s, err := mint(who)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	alice, bob, old := tok("alice"), tok("bob"), tok("expired")
	const key = "ak_demo_reporting_0123456789"

	for _, c := range []struct {
		path    string
		headers []string
		status  int
		want    string // a fragment of the body
	}{
		{"/health", nil, 200, `"ok"`},
		{"/me", nil, 401, "missing_credentials"},
		{"/me", []string{"Authorization", "Bearer"}, 401, "malformed_credentials"},
		{"/me", []string{"Authorization", "Basic dXNlcjpwYXNz"}, 401, "unsupported_scheme"},
		{"/me", []string{"Authorization", "Bearer " + old}, 401, `"expired"`},
		{"/me", []string{"Authorization", "Bearer " + alice + "x"}, 401, "invalid_credentials"},
		{"/me", []string{"Authorization", "bearer " + alice}, 200, `"alice"`},
		{"/me", []string{"X-API-Key", key}, 200, `"reporting-job"`},
		{"/me", []string{"X-API-Key", "ak_demo_guess_00000000000"}, 401, "invalid_credentials"},
		{"/admin/stats", []string{"Authorization", "Bearer " + alice}, 200, "42"},
		{"/admin/stats", []string{"Authorization", "Bearer " + bob}, 403, "missing_role"},
		{"/reports", []string{"Authorization", "Bearer " + bob}, 200, "q1"},
		{"/reports", []string{"X-API-Key", key}, 200, "q1"},
		{"/reports", []string{"Authorization", "Bearer " + alice}, 403, "missing_permission"},
		{"/t/orders", []string{"Authorization", "Bearer " + alice, "X-Tenant-ID", "acme"}, 200, `"acme"`},
		{"/t/orders", []string{"Authorization", "Bearer " + alice, "Host", "acme.api.localhost:8080"}, 200, `"acme"`},
		{"/t/orders", []string{"Authorization", "Bearer " + alice, "X-Tenant-ID", "globex"}, 403, "tenant_mismatch"},
		{"/t/orders", []string{"Authorization", "Bearer " + alice}, 400, "FX_TENANT_REQUIRED"},
		{"/t/orders", []string{"Authorization", "Bearer " + alice, "X-Tenant-ID", "acme;rm"}, 400, "malformed_tenant"},
		{"/t/orders", []string{"X-Tenant-ID", "acme"}, 401, "missing_credentials"},
	} {
		req := httptest.NewRequest("GET", c.path, nil)
		for i := 0; i+1 < len(c.headers); i += 2 {
			if c.headers[i] == "Host" {
				req.Host = c.headers[i+1]
			} else {
				req.Header.Set(c.headers[i], c.headers[i+1])
			}
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(body), c.want) {
			t.Errorf("GET %s %v: %d %s, want %d with %s", c.path, c.headers[:min(len(c.headers), 1)], resp.StatusCode, body, c.status, c.want)
		}
	}
}
