package main

import (
	"net"
	"testing"

	"github.com/fxhq/fx/bench/techempower/internal/pgtest"
	"github.com/fxhq/fx/bench/techempower/internal/tfbcheck"
	"github.com/fxhq/fx/bench/techempower/internal/world"
)

// TestShapes: the raw-fasthttp peer answers each of TFB's paths as the
// entry does, against a real PostgreSQL.
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
	s := newServer(db)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	defer func() {
		if err := s.Shutdown(); err != nil {
			t.Error(err)
		}
		<-served
	}()
	tfbcheck.Check(t, "http://"+ln.Addr().String(), pg.URL)
}
