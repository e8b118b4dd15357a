// Package conn is fx's connection layer: everything that happens to a
// served connection below the request, before fx's core sees a
// RequestCtx and after it answered one. It knows nothing of the App, the
// Ctx or the error catalog (it cannot import package fx); the core hands
// it the response for a refused connection and the observer of that
// refusal as functions (Config.Refuse, Config.Observe), and maps its
// Faults to catalog codes.
//
// Where each part lives:
//
//   - Accept (listener.go, with listener_unix.go and listener_other.go):
//     NewListener bounds the connections open at once (Config.Limit),
//     answers the one beyond through Config.Refuse after reading its
//     head, retries temporary accept errors with a backoff, and derives
//     the default limit from the descriptor budget (DefaultLimit).
//   - Phase deadlines (deadline.go): each accepted connection enforces
//     Config.Timeouts itself, phase by phase (reading, writing, idle),
//     with a process-wide coarse clock and lazily armed socket deadlines.
//   - Lingering close (linger.go): a connection closed after an error
//     response (ErrorResponse), or refused, is half-closed and drained,
//     within bounds, so that the client reads its response.
//   - Draining close (drain.go): once the listener is closed, a
//     connection's Close half-closes it and discards what the client still
//     sends, so that a client racing the close reads a clean end of stream
//     rather than a reset; WaitDrained lets the shutdown wait for them,
//     and EndReadsBy ends the reads still waiting by the shutdown's
//     deadline, so that such a request is answered within it.
//   - Framing guard (framing.go): FramingGuard, fasthttp's HeaderReceived
//     hook, refuses ambiguous framing (request smuggling) and a body
//     announced over the limit; MarkedFault tells the server's
//     ErrorHandler why. A bare LF ending a line is accepted, as fasthttp
//     accepts it; nothing of the request is kept per connection.
//   - A head ended by a bare LF (bareblock.go): a connection whose read
//     returned a whole head that fasthttp would wait on fails its next
//     read with ErrBareLFHead, so the core answers it at once.
//   - The serving goroutine's stack (stack.go): a connection's first read
//     grows it to the size the response path needs, while the stack is
//     shallow and its copy cheap.
//
// The core's use, per request: FramingGuard runs as the header is read;
// on a transport error, MarkedFault and ErrorResponse before the envelope
// is written; Managed for a handler that sets its own write deadlines.
// Nothing here allocates per request.
package conn
