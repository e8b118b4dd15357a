package middleware_test

import (
	"crypto/sha256"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/valyala/fasthttp"
)

// CredentialDigest is the SHA-256 of the credential Auth verified, as
// sent (an API key, a bearer token without "Bearer "), so two keys whose
// principals carry no Subject are told apart; a principal Auth did not
// verify has none.
func TestCredentialDigest(t *testing.T) {
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{
		"key-one-0123456789abcdef": {}, "key-two-0123456789abcdef": {},
	})
	if err != nil {
		t.Fatal(err)
	}
	bearer := middleware.VerifierFunc(func(*fx.Ctx, string) (*middleware.Principal, error) {
		return &middleware.Principal{Scheme: middleware.SchemeBearer}, nil
	})
	app := fx.New()
	app.Use(middleware.Auth(middleware.AuthConfig{APIKeys: keys, Bearer: bearer, Optional: true}))
	app.Get("/", func(c *fx.Ctx) error {
		d, ok := middleware.CredentialDigest(c)
		if !ok {
			return c.String(200, "none")
		}
		return c.Send(200, "application/octet-stream", d[:])
	})
	app.Get("/set", func(c *fx.Ctx) error {
		middleware.SetPrincipal(c, &middleware.Principal{Scheme: "session"})
		_, ok := middleware.CredentialDigest(c)
		return c.String(200, map[bool]string{true: "digest", false: "none"}[ok])
	})
	get := func(path, name, value string) string {
		var rc fasthttp.RequestCtx
		rc.Request.SetRequestURI(path)
		if name != "" {
			rc.Request.Header.Set(name, value)
		}
		app.Handler()(&rc)
		return string(rc.Response.Body())
	}
	for _, tc := range []struct{ name, value, cred string }{
		{"X-API-Key", "key-one-0123456789abcdef", "key-one-0123456789abcdef"},
		{"X-API-Key", "key-two-0123456789abcdef", "key-two-0123456789abcdef"},
		{"Authorization", "Bearer tok.en-1", "tok.en-1"},
	} {
		want := sha256.Sum256([]byte(tc.cred))
		if got := get("/", tc.name, tc.value); got != string(want[:]) {
			t.Errorf("%s: %q: digest %x, want %x", tc.name, tc.value, got, want)
		}
	}
	if got := get("/", "", ""); got != "none" {
		t.Errorf("no credentials: %q, want none", got)
	}
	if got := get("/set", "", ""); got != "none" {
		t.Errorf("a principal SetPrincipal stored: %q, want none", got)
	}
}
