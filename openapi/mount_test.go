package openapi_test

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/openapi"
)

func fetch(t *testing.T, app *fx.App, target string) (int, string, string) {
	t.Helper()
	resp, err := app.Test(httptest.NewRequest("GET", target, nil))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestMountServesDocumentAndDocs: the document (generated once, without the
// documentation's own routes, plugin routes included), the page and its
// embedded script.
func TestMountServesDocumentAndDocs(t *testing.T) {
	app := testApp()
	openapi.Mount(app, openapi.Config{Title: "Shop <1>"})
	app.Register(fx.Plugin{Name: "late", Setup: func(a *fx.App) error {
		a.Get("/late", func(c *fx.Ctx) error { return nil })
		return nil
	}})
	status, ct, body := fetch(t, app, "/openapi.json")
	if status != 200 || ct != "application/json" {
		t.Fatalf("/openapi.json: %d %s %s", status, ct, body)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	paths := doc["paths"].(map[string]any)
	if paths["/late"] == nil || paths["/openapi.json"] != nil || paths["/docs"] != nil {
		t.Errorf("paths %v", keysOf(paths))
	}
	if _, _, again := fetch(t, app, "/openapi.json"); again != body {
		t.Error("the document changed between requests")
	}
	status, ct, page := fetch(t, app, "/docs")
	if status != 200 || !strings.HasPrefix(ct, "text/html") ||
		!strings.Contains(page, `Redoc.init("/openapi.json", {sanitize: true,`) ||
		!strings.Contains(page, `<script src="/docs/redoc.standalone.js">`) ||
		!strings.Contains(page, "Shop &lt;1&gt;") {
		t.Errorf("/docs: %d %s\n%s", status, ct, page)
	}
	status, ct, js := fetch(t, app, "/docs/redoc.standalone.js")
	if status != 200 || !strings.HasPrefix(ct, "text/javascript") || len(js) < 500_000 || strings.Contains(js[len(js)-200:], "sourceMappingURL") {
		t.Errorf("script: %d %s, %d bytes", status, ct, len(js))
	}
}

// TestMountNoDocs: DocsPath "-" serves the document only.
func TestMountNoDocs(t *testing.T) {
	app := fx.New()
	openapi.Mount(app, openapi.Config{Path: "/spec.json", DocsPath: "-"})
	if status, _, _ := fetch(t, app, "/spec.json"); status != 200 {
		t.Errorf("/spec.json: %d", status)
	}
	if status, _, _ := fetch(t, app, "/docs"); status != 404 {
		t.Errorf("/docs: %d, want 404", status)
	}
}

// TestMountServesYAML: the YAML document says what the JSON one says
// (checked by reading it back in openapi/conformance with a YAML parser).
func TestMountServesYAML(t *testing.T) {
	app := testApp()
	openapi.Mount(app, openapi.Config{})
	status, ct, body := fetch(t, app, "/openapi.yaml")
	if status != 200 || ct != "application/yaml" {
		t.Fatalf("/openapi.yaml: %d %s", status, ct)
	}
	for _, want := range []string{"\"openapi\": \"3.1.0\"\n", "\"/users/{id}\":\n", "- \"USER_NOT_FOUND\"\n", "\"maximum\": 99\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("YAML lacks %q", want)
		}
	}
}

// TestYAMLScalars: strings are always quoted, so none reads back as
// another type; values outside JSON are refused.
func TestYAMLScalars(t *testing.T) {
	b, err := openapi.YAML(map[string]any{"a": []any{"true", "1", "", "x\ny", nil, true, 1.5, 2, map[string]any{}, []any{}}})
	if err != nil {
		t.Fatal(err)
	}
	want := "\"a\":\n  - \"true\"\n  - \"1\"\n  - \"\"\n  - \"x\\ny\"\n  - null\n  - true\n  - 1.5\n  - 2\n  - {}\n  - []\n"
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	if _, err := openapi.YAML(map[string]any{"a": struct{}{}}); err == nil {
		t.Error("a struct was encoded")
	}
}

// TestDocsPagePolicy: behind SecurityHeaders with its defaults, the page
// (and only the page) answers with its own Content-Security-Policy: its
// scripts and styles from the origin, or carrying the nonce drawn for
// that response (the one in the page), nothing inline without it; the
// page is not cached, Redoc sanitises the document, and the other
// headers and the other routes keep the App's policy.
func TestDocsPagePolicy(t *testing.T) {
	app := fx.New()
	app.Use(middleware.SecurityHeaders(middleware.SecurityHeadersConfig{}))
	openapi.Mount(app, openapi.Config{Path: "/spec</script>.json"})
	nonceRE := regexp.MustCompile(`'nonce-([A-Za-z0-9+/=]{24})'`)
	var nonces []string
	for range 2 {
		resp, err := app.Test(httptest.NewRequest("GET", "/docs", nil))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		page, csp := string(b), resp.Header.Get("Content-Security-Policy")
		m := nonceRE.FindStringSubmatch(csp)
		if m == nil {
			t.Fatalf("page policy %q has no nonce", csp)
		}
		nonces = append(nonces, m[1])
		for _, want := range []string{"default-src 'none'", "script-src 'self' 'nonce-" + m[1] + "'", "style-src 'self' 'nonce-" + m[1] + "'", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("page policy %q lacks %q", csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") || strings.Contains(csp, "http") {
			t.Errorf("page policy %q allows inline code or another origin", csp)
		}
		if strings.Count(page, `nonce="`+m[1]+`"`) != 2 || strings.Count(page, "<script") != 2 || strings.Count(page, "<style") != 1 {
			t.Errorf("the page's inline script and style do not carry the nonce:\n%s", page)
		}
		if !strings.Contains(page, `Redoc.init("/spec\u003c/script\u003e.json", {sanitize: true, nonce: document.currentScript.nonce}`) {
			t.Errorf("Redoc is not initialised with the escaped spec URL, sanitising and the nonce:\n%s", page)
		}
		if resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("page headers %v", resp.Header)
		}
	}
	if nonces[0] == nonces[1] {
		t.Error("two responses share a nonce")
	}
	resp, err := app.Test(httptest.NewRequest("GET", "/spec%3C/script%3E.json", nil))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != middleware.DefaultContentSecurityPolicy {
		t.Errorf("document: %d, policy %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
}
