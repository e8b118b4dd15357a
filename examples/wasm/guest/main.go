// Command guest is the example fx WASM guest served by examples/wasm. Build
// it as a WASI reactor (from the repository root):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o examples/wasm/guest.wasm ./examples/wasm/guest
//
// It compiles natively too (the handler is registered, nothing is
// exported), so `go build ./...` and `go vet ./...` stay green.
package main

import (
	"strings"

	"github.com/fxhq/fx/wasm/guest"
)

// init registers the handler: a c-shared guest runs package initialisers,
// never main.
func init() { guest.Handle(handle) }

func handle(r guest.Request) guest.Response {
	switch {
	case r.Path == "/wasm/hello":
		return guest.Text(200, "Hello from a Go guest!\n")
	case strings.HasPrefix(r.Path, "/wasm/greet/"):
		// Hand-built JSON: encoding/json costs ~220 µs per call in a guest.
		b := append([]byte(`{"greeting":`), guest.AppendJSONString(nil, "Hello, "+r.Param("name")+"!")...)
		return guest.JSON(200, append(b, '}'))
	case r.Path == "/wasm/reverse":
		out := make([]byte, len(r.Body))
		for i, c := range r.Body {
			out[len(out)-1-i] = c
		}
		return guest.Response{Status: 200, Header: guest.Header{{"Content-Type", "application/octet-stream"}}, Body: out}
	case r.Path == "/wasm/panic":
		panic("the guest panicked") // the client sees 502 FX_WASM_ERROR; the log has this text
	}
	return guest.JSON(404, []byte(`{"error":"no such guest route"}`))
}

func main() {}
