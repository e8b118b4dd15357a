package fx

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fxhq/fx/internal/conn"
)

// Streaming. fasthttp writes a streamed body after the handler returns:
// the handler registers a body stream, the connection's goroutine writes
// the status and headers, then copies the stream to the client as chunks
// (Transfer-Encoding: chunked), flushing each. So:
//
//   - the stream function runs after the handler chain has returned, in a
//     goroutine of its own; the Ctx has been recycled by then and must not
//     be used in it (read what you need from c before calling Stream);
//   - the status and headers are sent before the function runs: a failure
//     inside it cannot become an envelope. fx then logs the error and ends
//     the response without its final chunk, so the client sees a truncated
//     body (an error, never a silently complete one), and the connection
//     is closed;
//   - fasthttp's WriteTimeout is one deadline for the whole response, so
//     a long stream would be cut when it expires. On connections served
//     by Listen and Serve, Stream renews Config.WriteTimeout instead each
//     time data is flushed and when fn returns (for the final chunk): it
//     bounds a client that stops reading, not the stream's length
//     (app.Test, the nethttp adapter and a fasthttp.Server of your own
//     keep their own write-timeout rules);
//   - Shutdown waits for streams to end: a stream that runs until the
//     client leaves must also stop at Done (App.Done, EventWriter.Done).
//
// Cost: one goroutine, one pipe and one bufio.Writer (4 KiB) per stream.

// Stream answers with status 200, Content-Type contentType and the body fn
// writes to w, sent as the writes are flushed (w.Flush). fn runs after the
// handler returns (see above: never touch the Ctx in it); it returns when
// it is done, or at once when a write fails (the client went away). A
// non-nil error, or a panic, from fn is logged and truncates the response
// (connection closed). For a HEAD request fn is not run. Stream returns nil;
// it replaces any body written before.
func (c *Ctx) Stream(contentType string, fn func(w *bufio.Writer) error) error {
	resp := &c.rc.Response
	resp.SetStatusCode(200)
	resp.Header.SetContentType(contentType)
	body := &streamBody{
		fn:      fn,
		app:     c.app,
		method:  c.Method(),
		path:    c.Path(),
		timeout: c.app.cfg.WriteTimeout,
	}
	// Only a connection the App serves itself (Listen, Serve) has its write
	// deadline managed here: a RequestCtx set up with Init (tests, custom
	// transports) has a placeholder Conn whose deadline methods panic, and
	// a fasthttp.Server of your own keeps its own WriteTimeout rules.
	body.conn = conn.Managed(c.rc.Conn())
	if body.conn != nil && body.timeout > 0 {
		// Take over the write deadline: fasthttp sets none of its own when
		// the handler did, and the stream renews it per flush and at its end.
		_ = c.rc.SetWriteDeadline(time.Now().Add(body.timeout))
	}
	resp.SetBodyStream(body, -1)
	return nil
}

// streamBody is the body stream of Stream: a pipe whose writer side is
// fn's, started on the first Read (so fn runs only once fasthttp writes
// the body: never for HEAD, never for a response an error replaced).
type streamBody struct {
	fn      func(w *bufio.Writer) error
	app     *App
	method  string
	path    string
	conn    net.Conn
	timeout time.Duration

	once sync.Once
	pr   *io.PipeReader
	pw   *io.PipeWriter
}

func (s *streamBody) Read(p []byte) (int, error) {
	s.once.Do(s.start)
	return s.pr.Read(p)
}

// Close is called by fasthttp when the body is written or abandoned; it
// makes fn's next write fail, so fn returns.
func (s *streamBody) Close() error {
	s.once.Do(func() {}) // never start fn after Close
	if s.pr != nil {
		s.pr.Close()
	}
	return nil
}

func (s *streamBody) start() {
	s.pr, s.pw = io.Pipe()
	go s.run()
}

func (s *streamBody) run() {
	w := bufio.NewWriter(&deadlineWriter{w: s.pw, conn: s.conn, timeout: s.timeout})
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = errors.New("panic: " + formatValue(r))
			}
		}()
		if err := s.fn(w); err != nil {
			return err
		}
		return w.Flush()
	}()
	if err != nil && !errors.Is(err, io.ErrClosedPipe) {
		s.app.logger.LogAttrs(s.app.life.stop.context(), slog.LevelError, "fx: stream failed after the response started; connection closed",
			slog.String("method", s.method), slog.String("path", s.path), slog.Any("error", err))
	}
	if err != nil {
		s.pw.CloseWithError(errStreamAborted) // fasthttp stops before the final chunk and closes the connection
		return
	}
	// The final chunk is written now, however long fn worked since its
	// last flush: it gets a WriteTimeout of its own too.
	renewWriteDeadline(s.conn, s.timeout)
	s.pw.Close()
}

var errStreamAborted = errors.New("fx: stream aborted")

// deadlineWriter renews the connection's write deadline before passing
// flushed data on (see the Streaming note).
type deadlineWriter struct {
	w       io.Writer
	conn    net.Conn
	timeout time.Duration
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	renewWriteDeadline(d.conn, d.timeout)
	return d.w.Write(p)
}

// renewWriteDeadline gives the next write to conn timeout from now; a
// nil conn (not served by the App) or a timeout of 0 is left alone.
func renewWriteDeadline(conn net.Conn, timeout time.Duration) {
	if conn != nil && timeout > 0 {
		_ = conn.SetWriteDeadline(time.Now().Add(timeout))
	}
}

// SSE answers with a Server-Sent Events stream (text/event-stream) and
// runs fn with an EventWriter once the headers are sent. It sets
// Cache-Control: no-cache and X-Accel-Buffering: no (so nginx does not
// buffer the stream); fx itself never compresses responses, and a
// compressing proxy or middleware must leave text/event-stream alone.
// Each event is flushed as it is sent. fn returns when it is done, when a
// send fails (the client went away) or when e.Done() is closed (the App
// is shutting down). The rules of Stream apply: fn runs after the handler
// returns and must not use the Ctx; an error from fn truncates the stream.
// A reconnecting client sends the last ID it saw in Last-Event-ID: read
// it with c.Header before calling SSE.
func (c *Ctx) SSE(fn func(e *EventWriter) error) error {
	c.rc.Response.Header.Set("Cache-Control", "no-cache")
	c.rc.Response.Header.Set("X-Accel-Buffering", "no")
	done := c.app.Done()
	return c.Stream("text/event-stream", func(w *bufio.Writer) error {
		return fn(&EventWriter{w: w, done: done})
	})
}

// Event is one Server-Sent Event. Data may span lines: each line becomes
// its own "data:" field and the client joins them with "\n". ID and Event
// must be single lines. Retry, when positive, tells the client how long
// to wait before reconnecting.
type Event struct {
	ID    string
	Event string // the event type; "" is "message"
	Data  string
	Retry time.Duration
}

// EventWriter writes Server-Sent Events to the client (see Ctx.SSE). It
// is not safe for concurrent use.
type EventWriter struct {
	w    *bufio.Writer
	done <-chan struct{}
}

// Done is closed when the App begins shutting down: end the stream then.
func (e *EventWriter) Done() <-chan struct{} { return e.done }

// Send writes ev and flushes it: e.Send(fx.Event{Data: "hi"}) sends one
// message event. An ID or Event with a line break (which would inject
// fields of its own) is an error and nothing is written.
func (e *EventWriter) Send(ev Event) error {
	if strings.ContainsAny(ev.ID, "\r\n\x00") || strings.ContainsAny(ev.Event, "\r\n") {
		return errors.New("fx: SSE: event ID and type must be single lines (the ID without NUL)")
	}
	w := e.w
	if ev.ID != "" {
		w.WriteString("id: ")
		w.WriteString(ev.ID)
		w.WriteByte('\n')
	}
	if ev.Event != "" {
		w.WriteString("event: ")
		w.WriteString(ev.Event)
		w.WriteByte('\n')
	}
	if ev.Retry > 0 {
		w.WriteString("retry: ")
		w.WriteString(strconv.FormatInt(ev.Retry.Milliseconds(), 10))
		w.WriteByte('\n')
	}
	writeLines(w, "data: ", ev.Data)
	w.WriteByte('\n')
	return w.Flush()
}

// Comment writes a comment (": text"), which clients ignore, and flushes
// it. Send one every 15-30 s as a heartbeat: it keeps proxies from
// closing an idle stream and notices a client that went away.
func (e *EventWriter) Comment(text string) error {
	writeLines(e.w, ": ", text)
	e.w.WriteByte('\n')
	return e.w.Flush()
}

// writeLines writes s as one prefixed line per line of s, splitting at
// "\r\n", "\r" and "\n" (the SSE line ends): a raw line break in data
// would otherwise end the field and start one the client parses.
func writeLines(w *bufio.Writer, prefix, s string) {
	for {
		i := strings.IndexAny(s, "\r\n")
		w.WriteString(prefix)
		if i < 0 {
			w.WriteString(s)
			w.WriteByte('\n')
			return
		}
		w.WriteString(s[:i])
		w.WriteByte('\n')
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
}
