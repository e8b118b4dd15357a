package middleware_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/jwt"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
)

// show sends GET target with the given header pairs and prints the status
// and body.
func show(app *fx.App, target string, header ...string) {
	showHeaders(app, "GET", target, nil, header...)
}

// showHeaders sends method target with the given header pairs (a "Host"
// pair sets the request's host) and prints the status, the body when there
// is one, and the named response headers that are present.
func showHeaders(app *fx.App, method, target string, names []string, header ...string) {
	req := httptest.NewRequest(method, target, nil)
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
	if len(body) == 0 {
		fmt.Println(resp.StatusCode)
	} else {
		fmt.Println(resp.StatusCode, string(body))
	}
	for _, n := range names {
		if v := resp.Header.Values(n); len(v) > 0 {
			fmt.Printf("  %s: %s\n", n, strings.Join(v, ", "))
		}
	}
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

func ExampleCORS() {
	app := fx.New()
	// First, before Auth: preflights carry no credentials.
	app.Use(middleware.CORS(middleware.CORSConfig{
		AllowOrigins:     []string{"https://app.example.com", "https://*.preview.example.com"},
		AllowCredentials: true,
		ExposeHeaders:    []string{"X-Request-ID"},
	}))
	app.Post("/orders", func(c *fx.Ctx) error {
		return fx.NewError(409, "ORDER_EXISTS", "Order already exists")
	})
	names := []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials",
		"Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Max-Age",
		"Access-Control-Expose-Headers", "Vary"}

	// The preflight: /orders has no OPTIONS route, CORS answers it.
	showHeaders(app, "OPTIONS", "/orders", names, "Origin", "https://pr-7.preview.example.com",
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
	// The actual request fails; its envelope keeps the CORS headers.
	showHeaders(app, "POST", "/orders", names, "Origin", "https://app.example.com")
	// Another origin: served as usual, no CORS headers, so the browser
	// keeps the response from the page's script.
	showHeaders(app, "POST", "/orders", names, "Origin", "https://example.com.evil.io")
	// Output:
	// 204
	//   Access-Control-Allow-Origin: https://pr-7.preview.example.com
	//   Access-Control-Allow-Credentials: true
	//   Access-Control-Allow-Methods: GET, HEAD, POST, PUT, PATCH, DELETE
	//   Access-Control-Allow-Headers: content-type
	//   Access-Control-Max-Age: 600
	//   Vary: Origin, Access-Control-Request-Method, Access-Control-Request-Headers
	// 409 {"error":{"code":"ORDER_EXISTS","message":"Order already exists"}}
	//   Access-Control-Allow-Origin: https://app.example.com
	//   Access-Control-Allow-Credentials: true
	//   Access-Control-Expose-Headers: X-Request-ID
	//   Vary: Origin
	// 409 {"error":{"code":"ORDER_EXISTS","message":"Order already exists"}}
	//   Vary: Origin
}

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

// A request ID from the caller is kept when it is a safe token, echoed on
// the response (error envelopes and 404s included) and readable by
// handlers; otherwise one is generated.
func ExampleRequestID() {
	app := fx.New()
	app.Use(middleware.RequestID(middleware.RequestIDConfig{}))
	app.Get("/whoami", func(c *fx.Ctx) error {
		id, _ := middleware.RequestIDFrom(c)
		return c.String(200, "request "+id)
	})
	show(app, "/whoami", "X-Request-ID", "checkout-7f3a")
	show(app, "/nope", "X-Request-ID", "checkout-7f3b")
	// Output:
	// 200 request checkout-7f3a
	// 404 {"error":{"code":"FX_NOT_FOUND","message":"Route GET /nope not found"}}
}

// One line per request, with the final status and code, the route pattern
// and the request ID; a skip rule keeps health checks out. (Times are
// removed here so the output is stable.)
func ExampleAccessLog() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "duration" || a.Key == "ip" {
				return slog.Attr{}
			}
			return a
		},
	}))
	app := fx.New(fx.Config{Logger: logger})
	app.Use(middleware.RequestID(middleware.RequestIDConfig{}))
	app.OnResponse(middleware.AccessLog(middleware.AccessLogConfig{
		Skip: func(c *fx.Ctx) bool { return c.Route() == "/livez" },
	}))
	app.Get("/livez", func(c *fx.Ctx) error { return c.String(200, "ok") })
	app.Get("/users/:id", func(c *fx.Ctx) error {
		return fx.NewError(404, "APP_USER_NOT_FOUND", "User not found")
	})
	show(app, "/livez")
	show(app, "/users/7", "X-Request-ID", "req-1")
	// Output:
	// 200 ok
	// level=WARN msg=request method=GET route=/users/:id path=/users/7 status=404 code=APP_USER_NOT_FOUND bytes_in=0 bytes_out=66 request_id=req-1
	// 404 {"error":{"code":"APP_USER_NOT_FOUND","message":"User not found"}}
}

// A handler that overruns its deadline answers 504 FX_TIMEOUT, and
// whatever it wrote is discarded. The deadline is on c.Context(), so
// database calls and outgoing requests made with it stop in time.
func ExampleTimeout() {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Route(fx.Route{Method: "GET", Path: "/report",
		Middleware: []fx.Middleware{middleware.Timeout(50 * time.Millisecond)},
		Handler: func(c *fx.Ctx) error {
			select {
			case <-time.After(time.Second): // a slow query honouring its context
				return c.String(200, "report")
			case <-c.Context().Done():
				return c.Context().Err()
			}
		}})
	show(app, "/report")
	// Output:
	// 504 {"error":{"code":"FX_TIMEOUT","message":"The request was not handled in time"}}
}
