package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
)

// testApp is the App main builds, on a user store the test controls.
func testApp(t *testing.T) (*fx.App, *userStore) {
	t.Helper()
	store := &userStore{}
	app, err := newApp(store)
	if err != nil {
		t.Fatal(err)
	}
	return app, store
}

// TestDocument: the example answers every response its document
// declares (RequireFullCoverage: 201, 422, 200, 404, 401, 400, 403, the
// probes' 200 and readiness' 503), the document carries the
// security and tenant header the admin routes' middleware declare, and
// the documentation page replaces the App-wide policy with its own. With
// FX_OPENAPI_OUT set to a directory, the document is also written there
// (as examples-openapi.json), for .ci/run to lint with Redocly.
func TestDocument(t *testing.T) {
	app, store := testApp(t)
	c := fxtest.New(t, app, fxtest.RequireFullCoverage())
	c.Post("/users").JSON(map[string]string{"name": "Ada", "email": "ada@example.com"}).Do().AssertStatus(201)
	c.Post("/users").JSON(map[string]string{"name": "", "email": "ada"}).Do().AssertIssues(
		fxtest.Issue{Location: "body", Path: "email"}, fxtest.Issue{Location: "body", Path: "name"})
	c.Get("/users/u1").Do().AssertJSON(200, User{ID: "u1", Name: "Ada", Email: "ada@example.com"})
	c.Get("/users/u2").Do().AssertError(404, "USER_NOT_FOUND")
	c.Get("/admin/stats").Do().AssertError(401, "FX_UNAUTHENTICATED")
	c.Get("/admin/stats").Header("X-API-Key", demoAPIKey).Do().AssertError(400, "FX_TENANT_REQUIRED")
	c.Get("/admin/stats").Header("X-API-Key", demoAPIKey).Header("X-Tenant-ID", "initech").Do().AssertError(403, "FX_FORBIDDEN")
	c.Get("/admin/stats").Header("X-API-Key", demoAPIKey).Header("X-Tenant-ID", "acme").Do().
		AssertJSON(200, Stats{Tenant: "acme", Users: 1})
	c.Get("/readyz").Do().AssertStatus(200)
	if csp := c.Get("/docs").Do().AssertStatus(200).Header().Get("Content-Security-Policy"); csp == "" || csp == c.Get("/livez").Do().Header().Get("Content-Security-Policy") {
		t.Errorf("the docs page has the App-wide policy %q", csp)
	}

	r := c.Get("/openapi.json").Do().AssertStatus(200)
	var doc struct {
		Components struct{ SecuritySchemes map[string]any }
		Paths      map[string]map[string]struct {
			Security   []map[string][]string
			Parameters []struct{ Name, In string }
			Responses  map[string]any
		}
	}
	r.Decode(&doc)
	stats := doc.Paths["/admin/stats"]["get"]
	if len(doc.Components.SecuritySchemes) != 2 || len(stats.Security) != 2 ||
		len(stats.Parameters) != 1 || stats.Parameters[0].Name != "X-Tenant-ID" || stats.Responses["401"] == nil {
		t.Errorf("admin security: %+v %+v", doc.Components.SecuritySchemes, stats)
	}
	if doc.Paths["/readyz"]["get"].Responses["503"] == nil || doc.Paths["/users"]["post"].Responses["201"] == nil {
		t.Errorf("probes or 201 undocumented: %+v", doc.Paths)
	}
	if dir := os.Getenv("FX_OPENAPI_OUT"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "examples-openapi.json"), r.Body, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The store unreachable: readiness answers its declared 503.
	store.unreachable.Store(true)
	c.Get("/readyz").Do().AssertError(503, "FX_SERVICE_UNAVAILABLE").AssertHeader("Retry-After", "1")
}
