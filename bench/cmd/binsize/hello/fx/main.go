// Command fx is the hello world of cmd/binsize in fx: one route answering
// JSON, nothing else imported.
package main

import (
	"context"
	"log"

	"github.com/fxhq/fx"
)

func main() {
	app := fx.New()
	app.Get("/hello", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"message": "Hello, World!"})
	})
	if err := app.Run(context.Background(), "127.0.0.1:8080"); err != nil {
		log.Fatal(err)
	}
}
