package main

import (
	"net"
	"testing"

	"github.com/gofiber/fiber/v3"

	"github.com/fxhq/fx/bench/techempower/internal/tfbcheck"
	"github.com/fxhq/fx/bench/techempower/internal/world"
)

// TestShapes: the Fiber v3 peer answers each of TFB's paths as the entry
// does, against a real PostgreSQL.
func TestShapes(t *testing.T) {
	tfbcheck.CheckServer(t, func(db *world.DB, ln net.Listener) func() error {
		app := newApp(db)
		go app.Listener(ln, fiber.ListenConfig{DisableStartupMessage: true})
		return app.Shutdown
	})
}
