package fxtest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/fxhq/fx"
)

// FaultHeader is the request header that makes an App served by
// ServeForClients fail: a request carrying it, with any value, panics in
// the App's last middleware, before the route's own middleware and
// handler, so the server answers it as it answers a handler's bug, 500
// FX_INTERNAL_ERROR (and logs the panic, as for any 5xx). It is how a
// client generated from the App's document reaches the 500 every
// operation declares without the App having a bug to trigger; the
// document does not name it (the client adds it through its transport).
const FaultHeader = "X-Fx-Test-Fault"

// ServeForClients serves app on 127.0.0.1 (Serve) for tests that run in
// another process, such as those of clients generated from the App's
// OpenAPI document, and lets that process drive it through the test's
// standard streams. It writes "listening ADDR" and a newline to out, then
// reads lines from in; for each it runs the function commands has for the
// line (what only the test can do: take a store down, hold a lock, so
// that a declared answer becomes reachable from outside) and, once it has
// returned, writes "ok LINE". An unknown line fails the test, and so
// does an error reading in. It returns when in ends; app is shut down when the test ends, as Serve does. A
// test passes os.Stdin and os.Stdout, and the other process starts the
// test binary (go test -c) with -test.run naming it.
//
// Before serving it adds the fault switch (FaultHeader) as the App's last
// middleware: app must not have booted yet. It serves only when the
// environment variable FX_SERVE_FOR_CLIENTS is set (to any value, the
// other process sets it); otherwise it skips the test, so that plain
// go test does not wait for lines no one sends.
func ServeForClients(t testing.TB, app *fx.App, in io.Reader, out io.Writer, commands map[string]func()) {
	t.Helper()
	if os.Getenv("FX_SERVE_FOR_CLIENTS") == "" {
		t.Skip("serves for another process's tests: that process sets FX_SERVE_FOR_CLIENTS")
	}
	app.Use(fault)
	fmt.Fprintln(out, "listening", Serve(t, app))
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		run, ok := commands[sc.Text()]
		if !ok {
			t.Fatalf("fxtest.ServeForClients: unknown line %q", sc.Text())
		}
		run()
		fmt.Fprintln(out, "ok", sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("fxtest.ServeForClients: reading the lines: %v", err)
	}
}

// fault is the fault switch: it panics on a request carrying FaultHeader.
func fault(c *fx.Ctx, next fx.Next) error {
	if c.Header(FaultHeader) != "" {
		panic("fxtest: " + FaultHeader + " asked for a 500")
	}
	return next()
}
