package main

import (
	"log/slog"
	"os"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
)

// TestServeForClients serves the demo on 127.0.0.1 for the clients
// generated from its document (scripts/openapi-clients runs it with
// FX_SERVE_FOR_CLIENTS=1; plain go test skips it), built by newApp as
// main builds it with FX_ENV=production, so that a client can reach the
// 500 every operation declares through the fault switch
// (fxtest.FaultHeader). It obeys no line of its own; it serves until
// stdin ends.
func TestServeForClients(t *testing.T) {
	app := newApp(fx.Config{Logger: slog.New(slog.NewJSONHandler(os.Stderr, nil))})
	fxtest.ServeForClients(t, app, os.Stdin, os.Stdout, nil)
}
