package main

import (
	"strings"
	"testing"

	"github.com/fxhq/fx/fxtest"
)

// The kit end to end: static files, probes, CORS, security headers,
// request IDs, a contract and the rate limit, each refusal an envelope.
func TestKitEndToEnd(t *testing.T) {
	c := fxtest.New(t, newApp(publicDir()))

	page := c.Get("/").Do().AssertStatus(200).
		AssertHeader("X-Content-Type-Options", "nosniff")
	if !strings.Contains(string(page.Body), "static file handler") {
		t.Errorf("index.html not served: %s", page.Body)
	}
	if page.Header().Get("X-Request-Id") == "" {
		t.Error("no X-Request-ID")
	}
	c.Get("/nope.txt").Do().AssertError(404, "FX_NOT_FOUND")

	c.Get("/livez").Do().AssertStatus(200)
	c.Get("/readyz").Do().AssertStatus(200)

	c.Options("/api/notes").
		Header("Origin", "https://pr-7.preview.example.com").
		Header("Access-Control-Request-Method", "POST").
		Do().AssertStatus(204).
		AssertHeader("Access-Control-Allow-Origin", "https://pr-7.preview.example.com")
	c.Get("/api/notes").Header("Origin", "https://evil.example.net").Do().
		AssertStatus(200).AssertHeader("Access-Control-Allow-Origin", "")

	c.Post("/api/notes").JSON(map[string]any{"text": ""}).Do().
		AssertError(422, "FX_VALIDATION_ERROR").
		AssertIssues(fxtest.Issue{Location: "body", Path: "text"})
	c.Post("/api/notes").JSON(map[string]any{"text": "hi"}).Do().AssertStatus(201)

	// 3 API requests so far from this client: 7 more are allowed, then 429.
	for i := 0; i < 7; i++ {
		c.Get("/api/notes").Do().AssertStatus(200)
	}
	r := c.Get("/api/notes").Do().AssertError(429, "FX_RATE_LIMITED")
	if r.Header().Get("Retry-After") == "" || r.Header().Get("RateLimit") == "" {
		t.Errorf("429 without Retry-After or RateLimit: %v", r.Header())
	}
}
