package main

import (
	"net"
	"testing"

	"github.com/gofiber/fiber/v3"

	"github.com/fxhq/fx/bench/techempower/internal/pgtest"
	"github.com/fxhq/fx/bench/techempower/internal/tfbcheck"
	"github.com/fxhq/fx/bench/techempower/internal/world"
)

// TestShapes: the Fiber v3 peer answers each of TFB's paths as the entry
// does, against a real PostgreSQL.
func TestShapes(t *testing.T) {
	pg := pgtest.Start(t)
	db, err := world.Open(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	app := newApp(db)
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln, fiber.ListenConfig{DisableStartupMessage: true}) }()
	defer func() {
		if err := app.Shutdown(); err != nil {
			t.Error(err)
		}
		<-served
	}()
	tfbcheck.Check(t, "http://"+ln.Addr().String(), pg.URL)
}
