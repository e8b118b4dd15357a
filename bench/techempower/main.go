// Command techempower is fx's entry for the TechEmpower Framework
// Benchmarks: the six test types (json, plaintext, db, queries, fortunes,
// updates) on TFB's paths, written as an fx service would be, with its
// database in PostgreSQL (TFB's hello_world, which postgres.sh starts).
//
//	DATABASE_URL=postgres://benchmarkdbuser:benchmarkdbpass@127.0.0.1:5432/hello_world \
//		techempower [-addr 127.0.0.1:8080] [-timeout 2s]
//
// DATABASE_URL is a pgx connection string; without pool_max_conns in it,
// the pool holds world.PoolSize() connections. The process serves until
// SIGINT or SIGTERM, then drains and closes the pool. docs/database.md
// walks through the code.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/fxhq/fx/bench/techempower/internal/world"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen on this `address`")
	timeout := flag.Duration("timeout", 2*time.Second, "each database route's deadline (c.Context() ends then: 504 FX_TIMEOUT)")
	flag.Parse()
	if err := run(*addr, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "techempower:", err)
		os.Exit(1)
	}
}

// run serves on addr until a signal, with the database of DATABASE_URL.
func run(addr string, timeout time.Duration) error {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return fmt.Errorf("DATABASE_URL is not set (a pgx connection string)")
	}
	db, err := world.Open(url)
	if err != nil {
		return err
	}
	app := newApp(db, slog.Default(), timeout)
	app.OnShutdown(func() error { db.Close(); return nil })
	return app.Run(context.Background(), addr)
}
