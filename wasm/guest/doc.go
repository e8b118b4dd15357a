// Package guest is the Go SDK for fx WASM guests: it hides the ABI of
// package github.com/fxhq/fx/wasm (see wasm/ABI.md) behind one function,
//
//	func(req guest.Request) guest.Response
//
// registered with Handle from an init function. Build the guest as a WASI
// reactor with Go 1.24 or later:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o guest.wasm .
//
// A plain build (without -buildmode=c-shared) is a WASI command: it exits
// after main, and the host refuses it at boot.
//
// The exports (fx_abi_version, fx_alloc, fx_handle) exist only when
// building for wasip1; on other platforms this package still compiles, so a
// guest's handler can be unit-tested natively with DecodeRequest and
// AppendResponse.
//
// A panic in the handler is not recovered: the guest crashes, the host
// answers 502 FX_WASM_ERROR, logs the panic message (the guest's stderr)
// and discards the instance. Returning a Response with a 4xx or 5xx status
// is the way to answer an expected failure.
package guest
