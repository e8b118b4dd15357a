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
// The shortest use is Mount:
//
//	app := fx.New()
//	wasm.Mount(app, "POST", "/render", guestBytes, wasm.Config{})
//	app.Listen(":8080") // compiles the guest; a bad module fails here
//
// One module behind several routes is a Module registered as a plugin:
//
//	m := wasm.New(guestBytes, wasm.Config{MaxInstances: 8})
//	app.Register(m.Plugin()) // compile and prewarm at boot, close on Shutdown
//	app.Get("/a", m.Handler())
//	app.Get("/b", m.Handler())
//
// Config bounds everything a guest can consume: instances (MaxInstances,
// MaxIdle), memory per instance (MemoryLimit), time per call (Timeout,
// sleeps included), the size of its response (MaxResponseBytes), and the
// calls and memory growth after which an instance is recycled. Its zero
// value is usable.
//
// # Cost
//
// Compilation happens once: well under a millisecond for a small
// hand-written guest, about 1.8 s for a Go guest (Config.Cache keeps the
// machine code across restarts). Instantiation costs ~40 µs for a small
// guest and ~8 ms for a Go guest, which is why instances are pooled and
// prewarmed. Per request, beyond the guest's own work, the host does one
// pool hand-off, one copy of the request into guest memory, one call, and
// the strict decoding of the response: about 2 µs. Stats reports the
// pool's counters.
//
// # Lifetime
//
// binary must not be modified after New, Compile or Mount. A Module from
// Mount, or whose Plugin is registered, is initialised by Boot and closed
// by App.Shutdown; a Module from Compile belongs to the caller, who must
// Close it. An instance serves one request at a time, and a guest that
// fails is closed and never reused: no state of a failed call reaches a
// later request. Close cancels the calls in progress and waits for them.
//
// # Errors
//
//   - A module that does not compile, lacks an export of the ABI, imports
//     something other than WASI preview 1, declares more memory than
//     Config.MemoryLimit or speaks another ABI version: Init, Compile and
//     Boot return an error wrapping ErrInvalidModule, and Listen does not
//     start.
//   - A guest that traps (unreachable, a Go panic, out of memory), exits,
//     runs past its Timeout, or returns anything but one valid
//     WasmResponse: 502 FX_WASM_ERROR. The error hook receives a
//     *GuestError; the reason, the trap text and the tail of the guest's
//     stderr go to the App's logger, never to the client.
//   - Every instance busy for longer than Config.QueueTimeout, or a Module
//     already closed: 503 FX_SERVICE_UNAVAILABLE with Retry-After.
//   - A request before the Module was initialised: a logged 502
//     FX_WASM_ERROR.
package wasm
