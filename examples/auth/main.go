// Command auth shows fx's Auth, RequireRoles/RequirePermissions and Tenant
// middleware on a few routes: a public route, routes for any signed-in
// caller, for a role, for a permission, and tenant-scoped routes whose
// tenant must match the caller's.
//
// Run it, and mint demo tokens (signed with the demo secret, valid 1 hour):
//
//	go run ./examples/auth &
//	ALICE=$(go run ./examples/auth -token alice)      # admin of tenant acme
//	BOB=$(go run ./examples/auth -token bob)          # viewer of tenant globex, reports:read
//	OLD=$(go run ./examples/auth -token expired)      # expired an hour ago
//
// Then each status:
//
//	curl -i localhost:8080/health                                           # 200, public
//	curl -i localhost:8080/me                                               # 401 missing_credentials + WWW-Authenticate
//	curl -i localhost:8080/me -H "Authorization: Bearer"                    # 401 malformed_credentials (invalid_request)
//	curl -i localhost:8080/me -H "Authorization: Basic dXNlcjpwYXNz"        # 401 unsupported_scheme
//	curl -i localhost:8080/me -H "Authorization: Bearer $OLD"               # 401 expired (invalid_token)
//	curl -i localhost:8080/me -H "Authorization: Bearer ${ALICE}x"          # 401 invalid_credentials (bad signature)
//	curl -i localhost:8080/me -H "Authorization: bearer $ALICE"             # 200: the scheme is case-insensitive
//	curl -i localhost:8080/me -H "X-API-Key: ak_demo_reporting_0123456789"  # 200, an API key principal
//	curl -i localhost:8080/me -H "X-API-Key: ak_demo_guess_00000000000"     # 401 invalid_credentials
//	curl -i localhost:8080/admin/stats -H "Authorization: Bearer $ALICE"    # 200
//	curl -i localhost:8080/admin/stats -H "Authorization: Bearer $BOB"      # 403 missing_role (insufficient_scope)
//	curl -i localhost:8080/reports -H "Authorization: Bearer $BOB"          # 200
//	curl -i localhost:8080/reports -H "X-API-Key: ak_demo_reporting_0123456789"  # 200
//	curl -i localhost:8080/reports -H "Authorization: Bearer $ALICE"        # 403 missing_permission
//	curl -i localhost:8080/t/orders -H "Authorization: Bearer $ALICE" -H "X-Tenant-ID: acme"    # 200
//	curl -i localhost:8080/t/orders -H "Authorization: Bearer $ALICE" -H "Host: acme.api.localhost:8080"  # 200, tenant from the subdomain
//	curl -i localhost:8080/t/orders -H "Authorization: Bearer $ALICE" -H "X-Tenant-ID: globex"  # 403 tenant_mismatch
//	curl -i localhost:8080/t/orders -H "Authorization: Bearer $ALICE"                           # 400 FX_TENANT_REQUIRED
//	curl -i localhost:8080/t/orders -H "Authorization: Bearer $ALICE" -H "X-Tenant-ID: acme;rm"  # 400 malformed_tenant
//
// The demo secret is for this example only: real services load keys from
// their secret store (or use RS256/ES256/EdDSA with the issuer's public key).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	fxjwt "github.com/fxhq/fx/middleware/jwt"
	"github.com/golang-jwt/jwt/v5"
)

const (
	issuer   = "https://auth.example.test"
	audience = "fx-example"
)

// demoSecret signs the demo tokens; FX_DEMO_SECRET (32+ bytes) overrides it.
func demoSecret() []byte {
	if s := os.Getenv("FX_DEMO_SECRET"); s != "" {
		return []byte(s)
	}
	return []byte("demo-only-hs256-secret-32-bytes!")
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	token := flag.String("token", "", "print a demo token (alice, bob or expired) and exit")
	flag.Parse()

	if *token != "" {
		tok, err := mint(*token)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(tok)
		return
	}

	app, err := newApp()
	if err != nil {
		log.Fatal(err)
	}
	err = app.Run(context.Background(), *addr, fx.RunConfig{ // until SIGINT/SIGTERM, then drains
		OnListen: func(a net.Addr) {
			log.Printf("listening on http://%s (see the curl lines in examples/auth/main.go)", a)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
}

// newApp wires the middleware and routes.
func newApp() (*fx.App, error) {
	jwtv, err := fxjwt.NewVerifier(fxjwt.Config{
		Algorithms: []string{"HS256"},
		Key:        demoSecret(),
		Issuer:     issuer,
		Audience:   []string{audience},
	})
	if err != nil {
		return nil, err
	}
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{
		"ak_demo_reporting_0123456789": {Subject: "reporting-job", Permissions: []string{"reports:read"}},
	})
	if err != nil {
		return nil, err
	}

	app := fx.New()
	// Every route authenticates when credentials are sent; Optional lets
	// anonymous requests reach the public routes. Guards go per route.
	app.Use(middleware.Auth(middleware.AuthConfig{Bearer: jwtv, APIKeys: keys, Optional: true}))

	signedIn := middleware.RequireRoles() // any principal
	tenant := middleware.Tenant(middleware.TenantConfig{
		Required:       true,
		BaseDomain:     "api.localhost",
		MatchPrincipal: true,
	})

	app.Get("/health", func(c *fx.Ctx) error { return c.JSON(200, map[string]string{"status": "ok"}) })
	// One route: its checks go in Route.Middleware, which runs after Auth
	// and before the route's contract and handler.
	app.Route(fx.Route{Method: "GET", Path: "/me", Middleware: []fx.Middleware{signedIn}, Handler: me})
	app.Route(fx.Route{
		Method:     "GET",
		Path:       "/reports",
		Middleware: []fx.Middleware{middleware.RequirePermissions("reports:read")},
		Handler:    func(c *fx.Ctx) error { return c.JSON(200, []string{"q1", "q2"}) },
	})
	// Every route under a prefix: a group.
	admin := app.Group("/admin", middleware.RequireRoles("admin"))
	admin.Get("/stats", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]int{"users": 42})
	})
	tenants := app.Group("/t", signedIn, tenant)
	tenants.Get("/orders", func(c *fx.Ctx) error {
		id, _ := middleware.TenantFrom(c)
		return c.JSON(200, map[string]any{"tenant": id, "orders": []string{}})
	})
	return app, nil
}

func me(c *fx.Ctx) error {
	p, _ := middleware.PrincipalFrom(c)
	return c.JSON(200, map[string]any{
		"subject": p.Subject, "scheme": p.Scheme, "roles": p.Roles,
		"permissions": p.Permissions, "tenant": p.Tenant,
	})
}

// mint signs a demo token.
func mint(who string) (string, error) {
	now := time.Now()
	claims := jwt.MapClaims{"iss": issuer, "aud": audience, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	switch who {
	case "alice":
		claims["sub"], claims["roles"], claims["tenant_id"] = "alice", []string{"admin"}, "acme"
	case "bob":
		claims["sub"], claims["roles"], claims["tenant_id"] = "bob", []string{"viewer"}, "globex"
		claims["permissions"] = []string{"reports:read"}
	case "expired":
		claims["sub"], claims["exp"] = "carol", now.Add(-time.Hour).Unix()
	default:
		return "", fmt.Errorf("unknown demo user %q (alice, bob, expired)", who)
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(demoSecret())
}
