// Command fiber is the hello world of cmd/binsize in Fiber v2.
package main

import (
	"log"

	"github.com/gofiber/fiber/v2"
)

func main() {
	app := fiber.New()
	app.Get("/hello", func(c *fiber.Ctx) error {
		return c.JSON(fiber.Map{"message": "Hello, World!"})
	})
	log.Fatal(app.Listen("127.0.0.1:8080"))
}
