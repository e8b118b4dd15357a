// Command fiber serves TechEmpower's six tests (json, plaintext, db,
// queries, fortunes, updates) on Fiber v3, written as a Fiber user would:
// one route per test on Fiber's router, c.JSON with go-json as the encoder
// (the encoder fx uses) and fx's Content-Type (application/json, without
// Fiber's default charset parameter), Fiber's error handler. Its database work is
// internal/world's, the same statements, pool and template as the fx
// entry's, so bench/techempower/load.sh compares the frameworks.
//
// Usage: DATABASE_URL=postgres://... fiber [-addr 127.0.0.1:8080]
package main

import (
	"flag"
	"log"
	"os"
	"strconv"

	json "github.com/goccy/go-json"
	"github.com/gofiber/fiber/v3"

	"github.com/fxhq/fx/bench/techempower/internal/world"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	db, err := world.Open(os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	log.Fatal(newApp(db).Listen(*addr, fiber.ListenConfig{DisableStartupMessage: true}))
}

type message struct {
	Message string `json:"message"`
}

func newApp(db *world.DB) *fiber.App {
	app := fiber.New(fiber.Config{
		ServerHeader: "Fiber",
		JSONEncoder:  json.Marshal,
		JSONDecoder:  json.Unmarshal,
	})
	app.Get("/json", func(c fiber.Ctx) error {
		return c.JSON(&message{Message: "Hello, World!"}, fiber.MIMEApplicationJSON)
	})
	app.Get("/plaintext", func(c fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, "text/plain; charset=utf-8")
		return c.SendString("Hello, World!")
	})
	app.Get("/db", func(c fiber.Ctx) error {
		w, err := db.World(c)
		if err != nil {
			return err
		}
		return c.JSON(&w, fiber.MIMEApplicationJSON)
	})
	app.Get("/queries", func(c fiber.Ctx) error {
		ws, err := db.Worlds(c, queries(c))
		if err != nil {
			return err
		}
		return c.JSON(ws, fiber.MIMEApplicationJSON)
	})
	app.Get("/fortunes", func(c fiber.Ctx) error {
		fs, err := db.Fortunes(c)
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, world.ContentTypeHTML)
		return world.RenderFortunes(c, fs)
	})
	app.Get("/updates", func(c fiber.Ctx) error {
		ws, err := db.Update(c, queries(c))
		if err != nil {
			return err
		}
		return c.JSON(ws, fiber.MIMEApplicationJSON)
	})
	return app
}

// queries is the queries parameter clamped to 1..500: missing, empty, not
// a number or below 1 is 1; above 500 (world.MaxQueries) is 500.
func queries(c fiber.Ctx) int {
	n, err := strconv.Atoi(c.Query("queries"))
	switch {
	case err != nil || n < 1:
		return 1
	case n > world.MaxQueries:
		return world.MaxQueries
	}
	return n
}
