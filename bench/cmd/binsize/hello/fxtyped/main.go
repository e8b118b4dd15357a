// Command fxtyped is the hello world of cmd/binsize as a typed operation
// with its OpenAPI document and /docs page, what Huma's hello world has.
package main

import (
	"context"
	"log"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/openapi"
)

type greeting struct {
	Name string `query:"name" validate:"omitempty,max=40"`
}

type message struct {
	Message string `json:"message"`
}

func main() {
	app := fx.New()
	fx.Op(app, "GET", "/hello", func(c *fx.Ctx, in *greeting) (*message, error) {
		return &message{Message: "Hello, " + in.Name + "!"}, nil
	})
	openapi.Mount(app, openapi.Config{Title: "Hello", Version: "1.0.0"})
	if err := app.Run(context.Background(), "127.0.0.1:8080"); err != nil {
		log.Fatal(err)
	}
}
