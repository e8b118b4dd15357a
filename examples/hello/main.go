// Command hello is the fx demo server: a success route, a route that
// returns an *fx.Error with details, one that panics, and the 404.
//
//	go run ./examples/hello            # listens on 127.0.0.1:8080
//	ADDR=127.0.0.1:0 go run ./examples/hello
//
// Ctrl-C (or SIGTERM) shuts it down gracefully: requests in flight are
// answered (for up to 10 s), then it exits; a second Ctrl-C exits at once.
//
//	curl -i localhost:8080/hello
//	curl -i localhost:8080/users/missing
//	curl -i localhost:8080/panic
//	curl -i localhost:8080/nope
package main

import (
	"cmp"
	"context"
	"errors"
	"log"
	"os"

	"github.com/fxhq/fx"
)

func main() {
	app := newApp()
	addr := cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8080")
	// Run logs the address, serves until SIGINT/SIGTERM, and returns once
	// the shutdown is complete.
	if err := app.Run(context.Background(), addr); err != nil {
		log.Fatal(err)
	}
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
