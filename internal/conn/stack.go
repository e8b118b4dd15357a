package conn

// The serving goroutine's stack. fasthttp serves each connection on a
// goroutine of its worker pool; a new one starts on the runtime's 2 KiB
// stack, and a worker parked between connections has its stack halved at
// each garbage collection. A request path that encodes JSON with go-json
// (fx's responses and envelopes) needs 8 KiB: the encoder's loop alone has
// a 3 KiB frame. The runtime grows a stack by copying it, and the copy
// decodes the position tables of every function on the stack, from its
// entry up to the call it is in. Grown where the stack first overflows,
// inside the encoder, those are fasthttp's connection loop, the request
// path and the encoder's loop, some of the largest functions of a
// program: ~150,000 instructions per connection (a served GET /hello
// counted under valgrind, bench/cmd/conncount), over ten times a
// keep-alive request's own server code, and ~10–30 µs on a loaded 2-core
// VM; grown here, ~20,000.
//
// reserveStack grows it earlier, at the connection's first read, while
// only fasthttp's loop and the read are on the stack: a frame of
// stackReserve bytes grows a 2 or 4 KiB stack to 8 KiB, so the request
// path runs on the stack it would have grown to anyway, and the copy
// decodes a few short tables. On a stack already that large it costs the
// zeroing of its frame, ~0.2 µs, once per connection (go test -run '^$'
// -bench ReserveStack ./internal/conn); it holds no memory beyond the 8
// KiB the first response takes anyway.

// stackReserve is the frame reserveStack allocates: from the depth of a
// connection's first read, a stack of 2 or 4 KiB must double to 8 KiB to
// hold it (the runtime also keeps ~1 KiB of guard below a frame).
const stackReserve = 4 << 10

// reserveStack grows the calling goroutine's stack to hold stackReserve
// more bytes than it uses now (see above).
//
//go:noinline
func reserveStack() {
	var frame [stackReserve]byte
	keepFrame(frame[:])
}

// keepFrame makes reserveStack's frame live, so that the compiler keeps it.
//
//go:noinline
func keepFrame([]byte) {}
