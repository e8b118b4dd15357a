// Command openapi serves a small API with its OpenAPI 3.1 document and a
// documentation page generated from its route contracts:
//
//	go run ./examples/openapi          # listens on 127.0.0.1:8082
//	curl localhost:8082/openapi.json   # the document
//	open http://localhost:8082/docs    # Redoc, served from the binary
package main

import (
	"cmp"
	"context"
	"log"
	"os"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/openapi"
	"github.com/fxhq/fx/validate"
)

// User is what the API returns.
type User struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// ErrUserNotFound is an application error GET /users/:id declares.
var ErrUserNotFound = fx.NewError(404, "USER_NOT_FOUND", "No such user")

var newUser = validate.Object(validate.Fields{
	"name":  validate.String().MinLen(1).MaxLen(100),
	"email": validate.String().Pattern(`^[^@\s]+@[^@\s]+$`, "Must be an email address"),
}).Strict()

func main() {
	app := fx.New()
	users := app.Group("/users").Tags("users")
	users.Route(fx.Route{
		Method: "POST", Path: "", Body: newUser,
		Doc:       fx.RouteDoc{Summary: "Create a user"},
		Responses: []fx.Response{{Status: 201, Body: User{}, Example: User{ID: "u1", Name: "Ada", Email: "ada@example.com"}}},
		Handler: func(c *fx.Ctx) error {
			b, _ := fx.ValidBody[map[string]any](c)
			return c.JSON(201, User{ID: "u1", Name: b["name"].(string), Email: b["email"].(string)})
		},
	})
	users.Route(fx.Route{
		Method: "GET", Path: "/:id",
		Doc:       fx.RouteDoc{Summary: "Get a user"},
		Errors:    []*fx.Error{ErrUserNotFound},
		Responses: []fx.Response{{Body: User{}}},
		Handler: func(c *fx.Ctx) error {
			if c.Param("id") != "u1" {
				return ErrUserNotFound
			}
			return c.JSON(200, User{ID: "u1", Name: "Ada", Email: "ada@example.com"})
		},
	})
	openapi.Mount(app, openapi.Config{Title: "Users API", Version: "1.0.0"})

	addr := cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8082")
	if err := app.Run(context.Background(), addr); err != nil {
		log.Fatal(err)
	}
}
