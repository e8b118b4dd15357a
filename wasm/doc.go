// Package wasm serves fx routes with WebAssembly guest modules, run by
// wazero (pure Go, no cgo).
//
// A guest is compiled once, when the App boots (or when Compile is called),
// and instantiated into a bounded pool of warm instances. Each request takes
// an instance for itself, is written into the guest's memory and answered
// by one call of the guest's fx_handle export; the guest returns a JSON
// WasmResponse that is validated strictly before anything is sent. The ABI
// is documented in ABI.md beside this file; Go guests use package
// github.com/fxhq/fx/wasm/guest, which hides it.
//
// Any guest failure — a trap (unreachable, a Go panic, out of memory), an
// exit, a timeout, or a response that is not a valid WasmResponse — answers
// 502 FX_WASM_ERROR. The instance is closed and never reused; the reason,
// the trap text and the tail of the guest's stderr go to the App's logger,
// never to the client. When every instance is busy a request waits up to
// Config.QueueTimeout, then gets 503 FX_SERVICE_UNAVAILABLE.
//
// The shortest use is Mount:
//
//	app := fx.New()
//	wasm.Mount(app, "POST", "/render", guestBytes, wasm.Config{})
//	app.Listen(":8080") // compiles the guest; a bad module fails here
package wasm
