// Command openapi serves a small API with its OpenAPI 3.1 document and a
// documentation page generated from its route contracts and from what its
// middleware declare (credentials, the tenant header, their errors):
//
//	go run ./examples/openapi          # listens on 127.0.0.1:8082
//	curl localhost:8082/openapi.json   # the document
//	open http://localhost:8082/docs    # Redoc, served from the binary
//
// The App runs behind middleware.SecurityHeaders with its defaults (a
// Content-Security-Policy that lets a page load nothing): the
// documentation page sends the policy it needs on its own responses.
// The admin routes take a demo API key or a JWT signed with the demo
// secret; real services load both from their secret store.
package main

import (
	"cmp"
	"context"
	"errors"
	"log"
	"os"
	"sync/atomic"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/health"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/jwt"
	"github.com/fxhq/fx/openapi"
	"github.com/fxhq/fx/validate"
)

// User is what the API returns.
type User struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Stats is what GET /admin/stats returns.
type Stats struct {
	Tenant string `json:"tenant"`
	Users  int    `json:"users"`
}

// ErrUserNotFound is an application error GET /users/:id declares.
var ErrUserNotFound = fx.NewError(404, "USER_NOT_FOUND", "No such user")

var newUser = validate.Object(validate.Fields{
	"name":  validate.String().MinLen(1).MaxLen(100),
	"email": validate.String().Pattern(`^[^@\s]+@[^@\s]+$`, "Must be an email address"),
}).Strict()

// demoAPIKey is the admin API key of this example.
const demoAPIKey = "ak_demo_admin_0123456789"

// docConfig describes the API in its document.
var docConfig = openapi.Config{
	Title: "Users API", Version: "1.0.0",
	Description: "A small API documented by fx from its routes and middleware.",
	License:     &openapi.License{Name: "MIT", Identifier: "MIT"},
	Tags: []openapi.Tag{
		{Name: "users", Description: "Create and read users."},
		{Name: "admin", Description: "Per-tenant figures, for administrators (an API key or a JWT)."},
	},
}

// userStore stands for the database the users live in: GET /readyz
// pings it, and answers 503 while it is unreachable.
type userStore struct{ unreachable atomic.Bool }

func (s *userStore) ping(context.Context) error {
	if s.unreachable.Load() {
		return errors.New("user store unreachable")
	}
	return nil
}

func newApp(store *userStore) (*fx.App, error) {
	app := fx.New()
	app.Use(middleware.SecurityHeaders(middleware.SecurityHeadersConfig{}))
	probes := health.New()
	probes.AddReadiness("users", store.ping)
	probes.Register(app)

	users := app.Group("/users").Tags("users")
	users.Route(fx.Route{
		Method: "POST", Path: "", Body: newUser,
		Doc:       fx.RouteDoc{Summary: "Create a user"},
		Responses: []fx.ResponseDoc{{Status: 201, Body: User{}, Example: User{ID: "u1", Name: "Ada", Email: "ada@example.com"}}},
		Handler: func(c *fx.Ctx) error {
			b, _ := fx.ValidBody[map[string]any](c)
			return c.JSON(201, User{ID: "u1", Name: b["name"].(string), Email: b["email"].(string)})
		},
	})
	users.Route(fx.Route{
		Method: "GET", Path: "/:id",
		Doc:       fx.RouteDoc{Summary: "Get a user"},
		Errors:    []*fx.Error{ErrUserNotFound},
		Responses: []fx.ResponseDoc{{Body: User{}}},
		Handler: func(c *fx.Ctx) error {
			if c.Param("id") != "u1" {
				return ErrUserNotFound
			}
			return c.JSON(200, User{ID: "u1", Name: "Ada", Email: "ada@example.com"})
		},
	})

	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{
		demoAPIKey: {Subject: "ops", Roles: []string{"admin"}, Tenant: "acme"},
	})
	if err != nil {
		return nil, err
	}
	tokens, err := jwt.NewVerifier(jwt.Config{
		Algorithms: []string{"HS256"},
		Key:        []byte(cmp.Or(os.Getenv("FX_DEMO_SECRET"), "demo-only-hs256-secret-32-bytes!")),
	})
	if err != nil {
		return nil, err
	}
	admin := app.Group("/admin",
		middleware.Auth(middleware.AuthConfig{Bearer: tokens, APIKeys: keys}),
		middleware.RequireRoles("admin"),
		middleware.Tenant(middleware.TenantConfig{Required: true, MatchPrincipal: true}),
	).Tags("admin")
	admin.Route(fx.Route{
		Method: "GET", Path: "/stats",
		Doc:       fx.RouteDoc{Summary: "Figures of the caller's tenant"},
		Responses: []fx.ResponseDoc{{Body: Stats{}}},
		Handler: func(c *fx.Ctx) error {
			tenant, _ := middleware.TenantFrom(c)
			return c.JSON(200, Stats{Tenant: tenant, Users: 1})
		},
	})

	openapi.Mount(app, docConfig)
	return app, nil
}

func main() {
	app, err := newApp(&userStore{})
	if err != nil {
		log.Fatal(err)
	}
	addr := cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8082")
	if err := app.Run(context.Background(), addr); err != nil {
		log.Fatal(err)
	}
}
