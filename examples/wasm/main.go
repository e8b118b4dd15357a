// Command wasm serves routes with a WebAssembly guest (examples/wasm/guest)
// through package github.com/fxhq/fx/wasm. From the repository root:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o examples/wasm/guest.wasm ./examples/wasm/guest
//	go run ./examples/wasm                      # listens on 127.0.0.1:8080
//
//	curl -i localhost:8080/wasm/hello
//	curl -i localhost:8080/wasm/greet/Ada
//	curl -i --data-binary 'stressed' localhost:8080/wasm/reverse
//	curl -i localhost:8080/wasm/panic           # 502 FX_WASM_ERROR; the panic is in the log
//
// MODULE=path/to/guest.wasm picks another guest; ADDR another address.
package main

import (
	"cmp"
	"context"
	"errors"
	"log"
	"os"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/wasm"
)

// newApp mounts the guest on its routes. The module compiles when the app
// boots: a bad one makes Boot (and so Run) fail.
func newApp(module []byte) *fx.App {
	app := fx.New()
	m := wasm.New(module, wasm.Config{Name: "example-guest"})
	app.Register(m.Plugin()) // compile + prewarm at boot, close on Shutdown
	app.Get("/wasm/hello", m.Handler())
	app.Get("/wasm/greet/:name", m.Handler())
	app.Post("/wasm/reverse", m.Handler())
	app.Get("/wasm/panic", m.Handler())
	return app
}

func main() {
	path := os.Getenv("MODULE")
	if path == "" {
		path = "examples/wasm/guest.wasm"
	}
	module, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		log.Fatalf("%s not found; build it first:\n\tGOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o %s ./examples/wasm/guest", path, path)
	}
	if err != nil {
		log.Fatal(err)
	}
	app := newApp(module)
	addr := cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8080")
	// Run boots the app (a bad module fails here), serves until
	// SIGINT/SIGTERM, drains, and closes the guest's runtime (OnShutdown).
	if err := app.Run(context.Background(), addr); err != nil {
		log.Fatal(err)
	}
}
