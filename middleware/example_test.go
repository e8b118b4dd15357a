package middleware_test

import (
	"fmt"
	"io"
	"net/http/httptest"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/jwt"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
)

// show sends GET target with the given header pairs and prints the status
// and body.
func show(app *fx.App, target string, header ...string) {
	req := httptest.NewRequest("GET", target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := app.Test(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))
}

func ExampleAuth() {
	secret := []byte("an-hs256-secret-of-32-bytes-min!")
	v, err := jwt.NewVerifier(jwt.Config{
		Algorithms: []string{"HS256"},
		Key:        secret,
		Issuer:     "https://auth.example.com",
		Audience:   []string{"orders-api"},
	})
	if err != nil {
		panic(err)
	}
	app := fx.New()
	app.Use(middleware.Auth(middleware.AuthConfig{Bearer: v}))
	app.Get("/me", func(c *fx.Ctx) error {
		p, _ := middleware.PrincipalFrom(c)
		return c.JSON(200, map[string]any{"sub": p.Subject, "roles": p.Roles})
	})

	// A client's token, minted in the test by fxtest with the same secret.
	tok := jwttest.NewSigner(jwttest.HS256, jwttest.SignerConfig{
		Key: secret, Issuer: "https://auth.example.com", Audience: "orders-api",
	}).Token(jwttest.Subject("alice"), jwttest.Roles("admin"))

	show(app, "/me", "Authorization", "Bearer "+tok)
	show(app, "/me")
	show(app, "/me", "Authorization", "Bearer")
	// Output:
	// 200 {"roles":["admin"],"sub":"alice"}
	// 401 {"error":{"code":"FX_UNAUTHENTICATED","message":"Authentication required: no credentials were sent","details":{"reason":"missing_credentials"}}}
	// 401 {"error":{"code":"FX_UNAUTHENTICATED","message":"Malformed Authorization header: expected the Bearer scheme and one token","details":{"reason":"malformed_credentials"}}}
}

func ExampleNewAPIKeys() {
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{
		"ak_live_2f9c0e4b7d1a8c3e": {Subject: "billing-service", Roles: []string{"service"}},
	})
	if err != nil {
		panic(err)
	}
	app := fx.New()
	app.Use(middleware.Auth(middleware.AuthConfig{APIKeys: keys}))
	app.Get("/me", func(c *fx.Ctx) error {
		p, _ := middleware.PrincipalFrom(c)
		return c.String(200, p.Subject+" via "+p.Scheme)
	})
	show(app, "/me", "X-API-Key", "ak_live_2f9c0e4b7d1a8c3e")
	show(app, "/me", "X-API-Key", "ak_live_guessed_wrong_000")
	// Output:
	// 200 billing-service via APIKey
	// 401 {"error":{"code":"FX_UNAUTHENTICATED","message":"API key is invalid","details":{"reason":"invalid_credentials"}}}
}

func ExampleRequireRoles() {
	keys, _ := middleware.NewAPIKeys(map[string]middleware.Principal{
		"ak_admin_0123456789abcdef": {Subject: "root", Roles: []string{"admin"}},
		"ak_user_0123456789abcdef0": {Subject: "bob"},
	})
	app := fx.New()
	// Optional: public routes stay public; guarded routes need a principal.
	app.Use(middleware.Auth(middleware.AuthConfig{APIKeys: keys, Optional: true}))
	// The check goes on the route: it runs after Auth and before the
	// route's contract and handler.
	app.Route(fx.Route{
		Method:     "GET",
		Path:       "/admin",
		Middleware: []fx.Middleware{middleware.RequireRoles("admin")},
		Handler:    func(c *fx.Ctx) error { return c.String(200, "welcome") },
	})

	show(app, "/admin", "X-API-Key", "ak_admin_0123456789abcdef")
	show(app, "/admin", "X-API-Key", "ak_user_0123456789abcdef0")
	show(app, "/admin")
	// Output:
	// 200 welcome
	// 403 {"error":{"code":"FX_FORBIDDEN","message":"Forbidden: the principal lacks a required role","details":{"reason":"missing_role"}}}
	// 401 {"error":{"code":"FX_UNAUTHENTICATED","message":"Authentication required: no credentials were sent","details":{"reason":"missing_credentials"}}}
}

func ExampleTenant() {
	app := fx.New()
	app.Use(middleware.Tenant(middleware.TenantConfig{Required: true, BaseDomain: "api.example.com"}))
	app.Get("/whoami", func(c *fx.Ctx) error {
		id, _ := middleware.TenantFrom(c)
		return c.String(200, "tenant "+id)
	})
	show(app, "/whoami", "X-Tenant-ID", "acme")
	show(app, "/whoami", "Host", "globex.api.example.com:8443")
	show(app, "/whoami", "X-Tenant-ID", "acme'; DROP TABLE t;--")
	show(app, "/whoami", "Host", "www.api.example.com")
	// Output:
	// 200 tenant acme
	// 200 tenant globex
	// 400 {"error":{"code":"FX_TENANT_REQUIRED","message":"Tenant required: the tenant ID is malformed","details":{"reason":"malformed_tenant"}}}
	// 400 {"error":{"code":"FX_TENANT_REQUIRED","message":"Tenant required: send the X-Tenant-ID header or use a tenant subdomain of api.example.com","details":{"reason":"missing_tenant"}}}
}
