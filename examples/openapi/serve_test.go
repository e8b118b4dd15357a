package main

import (
	"os"
	"testing"

	"github.com/fxhq/fx/fxtest"
)

// TestServeForClients serves the API on 127.0.0.1 for the clients
// generated from its document (scripts/openapi-clients runs it with
// FX_SERVE_FOR_CLIENTS=1; plain go test skips it), built by newApp as
// main builds it, with the user store under the caller's control so that
// GET /readyz's declared 503 is reachable from outside, as TestDocument
// reaches it in memory. Lines on stdin:
//
//	down   mark the user store unreachable: GET /readyz answers 503
//	up     mark it reachable again
//
// The lines are answered as fxtest.ServeForClients says.
func TestServeForClients(t *testing.T) {
	app, store := testApp(t)
	fxtest.ServeForClients(t, app, os.Stdin, os.Stdout, map[string]func(){
		"down": func() { store.unreachable.Store(true) },
		"up":   func() { store.unreachable.Store(false) },
	})
}
