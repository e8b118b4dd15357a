// Command gzip is a hello-world fx service that compresses with gzip
// only: it must not link zstd, brotli or any package it does not import
// (link_test.go).
package main

import (
	"context"
	"log"

	"github.com/fxhq/fx"
)

func main() {
	app := fx.New(fx.Config{Compression: &fx.CompressionConfig{}})
	app.Get("/hello", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"message": "Hello, fx!"})
	})
	if err := app.Run(context.Background(), "127.0.0.1:8080"); err != nil {
		log.Fatal(err)
	}
}
