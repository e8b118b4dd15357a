// Command every is the gzip program with zstd and brotli linked
// (link_test.go).
package main

import (
	"context"
	"log"

	"github.com/fxhq/fx"
	_ "github.com/fxhq/fx/compression/brotli"
	_ "github.com/fxhq/fx/compression/zstd"
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
