package wasm_test

import (
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/wasm"
)

// Mount is the one-call form: the route plus a plugin that compiles the
// guest at boot and closes it on Shutdown.
func ExampleMount() {
	module, _ := os.ReadFile("testdata/ok.wasm")
	app := fx.New()
	wasm.Mount(app, "GET", "/hello", module, wasm.Config{MaxInstances: 4})
	if err := app.Boot(); err != nil { // compile errors surface here
		fmt.Println(err)
		return
	}
	defer app.Shutdown()

	resp, _ := app.Test(httptest.NewRequest("GET", "/hello", nil))
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 hello from wat
}

// Compile reports a bad module at once; the Module can then serve any
// number of routes.
func ExampleCompile() {
	_, err := wasm.Compile([]byte("\x00asm\x01\x00\x00\x00"), wasm.Config{Name: "empty"})
	fmt.Println(errors.Is(err, wasm.ErrInvalidModule))
	fmt.Println(err)

	module, _ := os.ReadFile("testdata/ok.wasm")
	m, err := wasm.Compile(module, wasm.Config{Name: "ok"})
	if err != nil {
		fmt.Println(err)
		return
	}
	app := fx.New()
	app.Register(m.Plugin()) // closes m on app.Shutdown
	app.Get("/a", m.Handler())
	app.Post("/b", m.Handler())
	fmt.Println(m.Stats().Live)
	// Output:
	// true
	// wasm: invalid module: module "empty" does not export its memory as "memory" (see wasm/ABI.md)
	// 1
}
