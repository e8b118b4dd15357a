package kittest

import (
	"bufio"
	"fmt"
	"io"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
)

// ServeForClients serves app on 127.0.0.1 (fxtest.Serve) to the process
// that runs the test, the generated clients' tests of
// scripts/openapi-clients, and obeys it: it prints "listening ADDR", then
// reads lines from in (the test's stdin), runs each line's function of
// commands and prints "ok LINE" once it is done. An unknown line fails
// the test. It returns when in ends; app is shut down at the test's end.
func ServeForClients(t *testing.T, app *fx.App, in io.Reader, commands map[string]func()) {
	t.Helper()
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
