package middleware_test

import (
	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
)

func ExampleSecurityHeaders() {
	app := fx.New()
	app.Use(middleware.SecurityHeaders(middleware.SecurityHeadersConfig{
		TrustForwardedProto: true, // behind a TLS-terminating proxy
	}))
	app.Get("/health", func(c *fx.Ctx) error { return c.String(200, "ok") })
	names := []string{"Content-Security-Policy", "Referrer-Policy", "Strict-Transport-Security",
		"X-Content-Type-Options", "X-Frame-Options"}

	showHeaders(app, "GET", "/health", names, "X-Forwarded-Proto", "https")
	// Unmatched route: the 404 envelope carries the headers too; no HSTS
	// over plain HTTP.
	showHeaders(app, "GET", "/nope", names)
	// Output:
	// 200 ok
	//   Content-Security-Policy: default-src 'none'; frame-ancestors 'none'
	//   Referrer-Policy: strict-origin-when-cross-origin
	//   Strict-Transport-Security: max-age=63072000
	//   X-Content-Type-Options: nosniff
	//   X-Frame-Options: DENY
	// 404 {"error":{"code":"FX_NOT_FOUND","message":"Route GET /nope not found"}}
	//   Content-Security-Policy: default-src 'none'; frame-ancestors 'none'
	//   Referrer-Policy: strict-origin-when-cross-origin
	//   X-Content-Type-Options: nosniff
	//   X-Frame-Options: DENY
}
