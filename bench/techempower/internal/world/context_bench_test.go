package world_test

import (
	"context"
	"testing"
	"time"

	"github.com/fxhq/fx/bench/techempower/internal/pgtest"
	"github.com/fxhq/fx/bench/techempower/internal/world"
)

// BenchmarkWorldContext prices the deadline the fx entry gives each
// database statement, against a real PostgreSQL: one World read (one
// SELECT) per iteration,
//
//   - background: with context.Background(), as the raw fasthttp peer
//     calls it (pgx watches nothing: the context is never done), and as
//     Fiber's Ctx, which is a context that is never done, behaves;
//   - deadline: with a context made as fx makes c.Context() behind
//     middleware.Timeout (context.WithDeadline of a cancellable parent,
//     cancelled when the request ends), which pgx watches for the
//     statement (context.AfterFunc registered and removed) and a runtime
//     timer backs.
//
// The difference is what a request deadline costs per statement, the
// part of the entry's gap to its peers on db that is not the framework
// (docs/performance.md, "TechEmpower shapes").
//
//	cd bench/techempower && go test -run x -bench WorldContext -benchmem ./internal/world
func BenchmarkWorldContext(b *testing.B) {
	pg := pgtest.Start(b)
	db, err := world.Open(pg.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	parent, stop := context.WithCancel(context.Background()) // the App's, which Shutdown cancels
	defer stop()

	b.Run("background", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := db.World(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("deadline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithDeadline(parent, time.Now().Add(2*time.Second))
			_, err := db.World(ctx)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
