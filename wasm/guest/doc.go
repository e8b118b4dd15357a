// Package guest is the Go SDK for fx WASM guests: it hides the ABI of
// package github.com/fxhq/fx/wasm (see wasm/ABI.md) behind one function,
//
//	func(req guest.Request) guest.Response
//
// registered with Handle from an init function:
//
//	package main
//
//	import "github.com/fxhq/fx/wasm/guest"
//
//	func init() { // a reactor runs initialisers, never main
//		guest.Handle(func(r guest.Request) guest.Response {
//			return guest.Text(200, "hello "+r.Param("name"))
//		})
//	}
//
//	func main() {}
//
// Build the guest as a WASI reactor with Go 1.24 or later:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o guest.wasm .
//
// A plain build (without -buildmode=c-shared) is a WASI command: it exits
// after main, and the host refuses it at boot.
//
// Request carries the method, the decoded path, the raw query, the
// headers and path parameters (Header, an ordered list of name/value
// pairs) and the body. Text and JSON build the common responses; a
// Response may carry any status from 200 to 599, headers and a body.
//
// The exports (fx_abi_version, fx_alloc, fx_handle) exist only when
// building for wasip1; on other platforms this package still compiles, so a
// guest's handler can be unit-tested natively with DecodeRequest and
// AppendResponse.
//
// # Cost
//
// Per request the SDK makes one string holding every text field of the
// request and one copy of the body (DecodeRequest), and encodes the
// response without reflection into a buffer it reuses (AppendResponse).
// Header.Get and Request.Param are linear scans. Go code runs markedly
// slower as wasm than natively: encoding/json's reflection costs ~220 µs
// per request inside a guest, so prefer hand-written or generated
// encoders (AppendJSONString helps).
//
// # Lifetime
//
// Every field of a Request is a copy the handler may keep. The Response
// is encoded as soon as the handler returns: its Body may be reused
// afterwards. An instance serves one request at a time, so a handler
// needs no locking, and the host may discard an instance at any time
// (after a failure, after Config.MaxCalls calls): package state is a
// cache, never a store.
//
// # Errors
//
// A panic in the handler is not recovered: the guest crashes, the host
// answers 502 FX_WASM_ERROR, logs the panic message (the guest's stderr)
// and discards the instance. So does a Response the host refuses (a
// status outside 200-599, a hop-by-hop or Content-Length header, a
// header value with a control character). Returning a Response with a 4xx
// or 5xx status is the way to answer an expected failure.
package guest
