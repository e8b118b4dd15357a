// Package handover carries, from the core to a transport adapter, the
// function a request hands its connection to after its 101 Switching
// Protocols (fx.Ctx.Hijack). fasthttp's server calls that function
// itself; the nethttp adapter serves requests fasthttp's server never
// sees, so it finds the function here and calls it with the connection
// net/http hands over (http.Hijacker). One code path then serves a
// WebSocket on both transports.
package handover

// Key is the fasthttp.RequestCtx user-value key under which fx.Ctx.Hijack
// stores the fasthttp.HijackHandler it registered.
type Key struct{}
