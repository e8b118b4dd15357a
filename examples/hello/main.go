// Command hello is the fx demo server: a success route, a route that
// returns an *fx.Error with details, one that panics, and the 404.
//
//	go run ./examples/hello            # listens on 127.0.0.1:8080
//	ADDR=127.0.0.1:0 go run ./examples/hello
//
//	curl -i localhost:8080/hello
//	curl -i localhost:8080/users/missing
//	curl -i localhost:8080/panic
//	curl -i localhost:8080/nope
package main

import (
	"errors"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/examples/internal/demo"
)

func main() {
	app := newApp()
	demo.Serve(app, "127.0.0.1:8080")
}

// newApp builds the demo app (shared with main_test.go).
func newApp() *fx.App {
	app := fx.New()

	app.Get("/hello", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"message": "Hello, fx!"})
	})
	app.Get("/users/:id", func(c *fx.Ctx) error {
		id := c.Param("id")
		if id == "missing" {
			return fx.NewError(404, "APP_USER_NOT_FOUND", "User not found", map[string]string{"id": id})
		}
		return c.JSON(200, map[string]string{"id": id, "name": "Ada"})
	})
	app.Get("/panic", func(c *fx.Ctx) error {
		panic(errors.New("something broke"))
	})

	return app
}
