package fx

import (
	"context"
	"fmt"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// Ctx is the per-request context handed to handlers and middleware.
//
// Lifetime: a Ctx is pooled. It is valid from the moment the first
// middleware (or the handler) is called until the handler chain returns;
// after that the framework reuses it for another request. Do not keep a
// *Ctx, or call its methods, from a goroutine that outlives the handler.
//
// Strings returned by Method, Path, Href, Param, Header, Query and Host are
// copies: they stay valid and unchanged after the request ends (fasthttp
// reuses its request buffers, so a zero-copy string would later show
// another request's bytes). Methods whose result aliases request memory say
// so in their names or doc (Body).
type Ctx struct {
	rc  *fasthttp.RequestCtx
	app *App
	rt  *route

	// Chain state: depth is the level now running (0 = first middleware,
	// len(rt.chain) = handler); started is the highest level begun, which
	// is the whole of the next() guard.
	depth   int
	started int
	next    Next // c.callNext(), bound once per pooled Ctx: no allocation per request

	values []ctxValue
	cctx   context.Context
	cancel context.CancelFunc

	// deadline is the earliest SetDeadline made before Context created
	// cctx, which then carries it (ctx_deadline.go).
	deadline time.Time

	// body and query hold values produced by route-contract validation.
	body, query any

	jw  jsonWriter
	enc *json.Encoder

	// topPanic is the PanicError of a panic caught at level 0, reused so
	// that panics cost no allocation (see Ctx.recovered).
	topPanic PanicError

	// hdrSnap is where the boundary saves response headers before calling
	// the error hook, so a hook that declines can be undone.
	hdrSnap fasthttp.ResponseHeader

	// out is what observation reads: error code, clock, log attributes
	// (observe.go).
	out ctxOutcome
}

type ctxValue struct{ key, val any }

// jsonWriter appends go-json's output to the response body, dropping the
// newline that json.Encoder adds after every value.
type jsonWriter struct{ resp *fasthttp.Response }

func (w *jsonWriter) Write(p []byte) (int, error) {
	n := len(p)
	if n > 0 && p[n-1] == '\n' {
		p = p[:n-1]
	}
	w.resp.AppendBody(p)
	return n, nil
}

func newCtx(a *App) *Ctx {
	c := &Ctx{app: a}
	c.next = c.callNext()
	c.resetEncoder()
	return c
}

func (c *Ctx) resetEncoder() {
	c.enc = json.NewEncoder(&c.jw)
	c.enc.SetEscapeHTML(false)
}

func (c *Ctx) reset() {
	c.deadline = time.Time{} // SetDeadline's, when Context was never called
	if c.cancel != nil {
		c.cancel()
		c.cancel, c.cctx = nil, nil
	}
	clear(c.values)
	c.values = c.values[:0]
	c.rc, c.rt, c.body, c.query, c.jw.resp = nil, nil, nil, nil, nil
	c.depth, c.started = 0, 0
	c.topPanic = PanicError{}
	c.out.reset() // observe: ErrorCode, clock, log attributes
}

// RequestCtx returns the underlying fasthttp request context, for anything
// fx does not wrap. It shares the Ctx's lifetime.
func (c *Ctx) RequestCtx() *fasthttp.RequestCtx { return c.rc }

// App returns the App serving this request.
func (c *Ctx) App() *App { return c.app }

// Method returns the request method. Common methods cost no allocation.
func (c *Ctx) Method() string { return methodString(c.rc.Method()) }

func methodString(m []byte) string {
	switch string(m) { // the compiler does not allocate for this switch
	case fasthttp.MethodGet:
		return fasthttp.MethodGet
	case fasthttp.MethodPost:
		return fasthttp.MethodPost
	case fasthttp.MethodPut:
		return fasthttp.MethodPut
	case fasthttp.MethodPatch:
		return fasthttp.MethodPatch
	case fasthttp.MethodDelete:
		return fasthttp.MethodDelete
	case fasthttp.MethodHead:
		return fasthttp.MethodHead
	case fasthttp.MethodOptions:
		return fasthttp.MethodOptions
	}
	return string(m)
}

// Path returns the request path, percent-decoded and normalised (as
// net/http's URL.Path), without the query. It is the path the router
// matched (path.go), so a guard on it sees what decides the route. For a
// path refused before routing (seen only by OnResponse observers) it is
// the path as sent, escapes included. It allocates a copy.
func (c *Ctx) Path() string {
	if c.out.rawPath {
		return string(c.rc.URI().PathOriginal())
	}
	return string(c.rc.Path())
}

// Href returns the full request URL as the client sent it
// (scheme://host/path?query). It allocates a copy.
func (c *Ctx) Href() string { return string(c.rc.URI().FullURI()) }

// Host returns the Host header (with port, if any). It allocates a copy.
func (c *Ctx) Host() string { return string(c.rc.Host()) }

// Param returns the value of the path parameter name (":name" or "*name"
// in the route), or "" when the route has no such parameter. The value is
// the matching part of c.Path(): already percent-decoded (once) and
// normalised, since the router matches the path c.Path() returns (see
// path.go); it is not decoded again, so a value never differs from what
// c.Path() shows. The value is safe to keep.
func (c *Ctx) Param(name string) string {
	v, _ := c.rc.UserValue(name).(string)
	return v
}

// Params calls yield for every path parameter of the matched route, with
// decoded values, in no particular order.
func (c *Ctx) Params(yield func(name, value string) bool) {
	if c.rt == nil {
		return
	}
	for _, name := range c.rt.params {
		if !yield(name, c.Param(name)) {
			return
		}
	}
}

// Header returns the first value of the request header name
// (case-insensitive), or "". It allocates a copy.
func (c *Ctx) Header(name string) string { return string(c.rc.Request.Header.Peek(name)) }

// Query returns the first value of the query parameter name, decoded, or "".
// It allocates a copy.
func (c *Ctx) Query(name string) string { return string(c.rc.QueryArgs().Peek(name)) }

// Body returns the raw request body. The slice aliases fasthttp's request
// buffer: it is valid only until the handler returns; copy it to keep it.
func (c *Ctx) Body() []byte { return c.rc.Request.Body() }

// SetValue stores a request-scoped value under key, for later middleware
// and the handler (Value). Use a private key type, as with context.Context.
// Values are cleared when the request ends.
func (c *Ctx) SetValue(key, value any) {
	for i := range c.values {
		if c.values[i].key == key {
			c.values[i].val = value
			return
		}
	}
	c.values = append(c.values, ctxValue{key, value})
}

// Value returns the request-scoped value stored under key, or nil.
func (c *Ctx) Value(key any) any {
	for i := range c.values {
		if c.values[i].key == key {
			return c.values[i].val
		}
	}
	return nil
}

// Context returns a context.Context that is cancelled when the handler
// chain returns or the App shuts down (Shutdown); pass it to database calls
// and outgoing requests. It carries the values of the transport's context
// when one was supplied with SetRequestContext: under the nethttp adapter it
// is derived from the *http.Request's context, so it is also cancelled when
// the client goes away. On fasthttp it is not: fasthttp does not watch the
// connection while a handler runs, so bound long work with a timeout of
// your own.
//
// Cost: created on first use, one context.WithCancel (two small
// allocations, no goroutine); free when never called.
func (c *Ctx) Context() context.Context {
	if c.cctx == nil {
		c.cctx, c.cancel = c.newContext() // with SetDeadline's deadline, if any (ctx_deadline.go)
	}
	return c.cctx
}

// requestContextKey is the RequestCtx user-value key of SetRequestContext.
type requestContextKey struct{}

// SetRequestContext makes ctx the parent of Ctx.Context for the request
// served through rc. Transport adapters call it before running the App's
// handler (the nethttp adapter passes the *http.Request's context, so a
// client that disconnects cancels c.Context()). It costs one user value on rc.
func SetRequestContext(rc *fasthttp.RequestCtx, ctx context.Context) {
	rc.SetUserValue(requestContextKey{}, ctx)
}

// RequestContext returns the context set for rc with SetRequestContext, or
// nil when none was. Instrumentation that must replace the parent of
// Ctx.Context (a tracing middleware) reads it to keep the transport's
// cancellation. It costs one user-value lookup.
func RequestContext(rc *fasthttp.RequestCtx) context.Context {
	ctx, _ := rc.UserValue(requestContextKey{}).(context.Context)
	return ctx
}

// SetHeader sets a response header, replacing any value it had. Headers set
// before a failure are kept on the error response (request IDs, CORS).
func (c *Ctx) SetHeader(name, value string) { c.rc.Response.Header.Set(name, value) }

// JSON writes body as the JSON response with the given status and
// Content-Type application/json, replacing any body written before. It
// encodes with goccy/go-json straight into the response buffer: passing a
// pointer or a value that fits an interface costs no allocation, a small
// struct by value costs one (the interface conversion).
//
// An encoding failure (a channel, a function, a cycle, a MarshalJSON that
// fails or panics) is returned, and the response body is left empty; return
// it and the client gets the 500 envelope.
func (c *Ctx) JSON(status int, body any) (err error) {
	resp := &c.rc.Response
	resp.ResetBody() // usually nothing to do: fasthttp pooled the last request's buffer
	c.jw.resp = resp
	defer func() {
		if r := recover(); r != nil {
			c.resetEncoder() // the encoder may hold broken state
			resp.ResetBody()
			err = fmt.Errorf("fx: JSON: encoding %T panicked: %s", body, formatValue(r))
		}
	}()
	if err := c.enc.Encode(body); err != nil {
		resp.ResetBody()
		return fmt.Errorf("fx: JSON: %w", err)
	}
	resp.SetStatusCode(status)
	resp.Header.SetContentTypeBytes(contentTypeJSON)
	return nil
}

// Send writes body with the given status and content type.
func (c *Ctx) Send(status int, contentType string, body []byte) error {
	c.rc.Response.SetStatusCode(status)
	c.rc.Response.Header.SetContentType(contentType)
	c.rc.Response.SetBody(body)
	return nil
}

// String writes s as text/plain; charset=utf-8 with the given status.
func (c *Ctx) String(status int, s string) error {
	c.rc.Response.SetStatusCode(status)
	c.rc.Response.Header.SetContentType("text/plain; charset=utf-8")
	c.rc.Response.SetBodyString(s)
	return nil
}

// NoContent sends status with an empty body.
func (c *Ctx) NoContent(status int) error {
	c.rc.Response.ResetBody()
	c.rc.Response.SetStatusCode(status)
	return nil
}

var contentTypeJSON = []byte("application/json")
