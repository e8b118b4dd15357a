package kittest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
)

// FaultHeader is the request header that makes an App served by
// ServeForClients fail: a request carrying it, with any value, panics in
// the App's last middleware, before the route's own middleware and
// handler, so the server answers it as it answers a handler's bug, 500
// FX_INTERNAL_ERROR. It is how a generated client reaches the 500 every
// operation declares without the App having a bug to trigger; the
// document does not name it (a client adds it through its transport).
const FaultHeader = "X-Fx-Test-Fault"

// ServeForClients serves app on 127.0.0.1 (fxtest.Serve) to the process
// that runs the test, the generated clients' tests of
// scripts/openapi-clients, and obeys it: it prints "listening ADDR", then
// reads lines from in (the test's stdin), runs each line's function of
// commands and prints "ok LINE" once it is done. An unknown line fails
// the test. It returns when in ends; app is shut down at the test's end.
// Before serving it adds the fault switch (FaultHeader) as the App's
// last middleware: app must not have booted. Plain go test skips it: it
// serves only when FX_SERVE_FOR_CLIENTS is set (scripts/openapi-clients
// sets it to 1).
func ServeForClients(t *testing.T, app *fx.App, in io.Reader, commands map[string]func()) {
	t.Helper()
	if os.Getenv("FX_SERVE_FOR_CLIENTS") == "" {
		t.Skip("run by scripts/openapi-clients' tests (FX_SERVE_FOR_CLIENTS=1)")
	}
	app.Use(fault)
	fmt.Println("listening", fxtest.Serve(t, app))
	for sc := bufio.NewScanner(in); sc.Scan(); {
		run, ok := commands[sc.Text()]
		if !ok {
			t.Fatalf("unknown line %q", sc.Text())
		}
		run()
		fmt.Println("ok", sc.Text())
	}
}

// fault is the fault switch: it panics on a request carrying FaultHeader.
func fault(c *fx.Ctx, next fx.Next) error {
	if c.Header(FaultHeader) != "" {
		panic("kittest: " + FaultHeader + " asked for a 500")
	}
	return next()
}
