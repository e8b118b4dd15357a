package main

import (
	"net"
	"testing"

	"github.com/fxhq/fx/bench/techempower/internal/tfbcheck"
	"github.com/fxhq/fx/bench/techempower/internal/world"
)

// TestShapes: the raw-fasthttp peer answers each of TFB's paths as the
// entry does, against a real PostgreSQL.
func TestShapes(t *testing.T) {
	tfbcheck.CheckServer(t, func(db *world.DB, ln net.Listener) func() error {
		s := newServer(db)
		go s.Serve(ln)
		return s.Shutdown
	})
}
