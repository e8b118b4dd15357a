package fxtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/drainhook"
	"github.com/valyala/fasthttp/fasthttputil"
)

// Client sends requests to one App through its real fasthttp server, in
// memory (see the package documentation). It is safe for concurrent use;
// its assertions report to the testing.TB it was made with, so use it from
// that test's goroutines (t.Fatalf, called by Do on a transport failure,
// must run on the test's own goroutine).
type Client struct {
	t        testing.TB
	app      *fx.App
	contract *contract // strict mode (strict.go); nil when off

	// The in-memory listener WebSocket connections are served on
	// (websocket.go), started on first use.
	lnOnce sync.Once
	ln     *fasthttputil.InmemoryListener
}

// New returns a Client for app, bound to t. It boots app, failing the test
// (t.Fatalf) when Boot fails, and registers app.Shutdown with t.Cleanup: the
// App is shut down when the test ends, and a shutdown error fails the test.
// The teardown costs microseconds (nothing is left serving between
// requests, and Shutdown waits for in-memory exchanges on a channel).
//
// To test an App whose boot fails, call app.Boot yourself, or send a
// request with app.Test.
//
// Strict mode is on when the App has a document (see "Strict mode" in the
// package documentation for the rule and what is checked): every response
// is then held to its route's declared responses, and an undeclared one
// fails the test (t.Errorf). Lenient turns it off, Strict on;
// RequireFullCoverage fails the test at its end when a declared response
// was never exercised. Strict mode reads the route table here, once; it
// changes nothing in the App.
func New(t testing.TB, app *fx.App, opts ...Option) *Client {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if err := app.Boot(); err != nil {
		t.Fatalf("fxtest.New: app.Boot: %v", err)
	}
	t.Cleanup(func() {
		if err := app.Shutdown(); err != nil {
			t.Errorf("fxtest: app.Shutdown at the end of the test: %v", err)
		}
	})
	ct, err := newContract(app, o)
	if err != nil {
		t.Fatalf("fxtest.New: app.Routes: %v", err)
	}
	c := &Client{t: t, app: app, contract: ct}
	if o.fullCoverage {
		if ct == nil {
			t.Fatalf("fxtest.New: RequireFullCoverage needs strict mode, and it is off (Lenient, or an App without a document)")
		}
		t.Cleanup(func() {
			if cov := c.Coverage(); !cov.Full() {
				t.Errorf("%s", cov)
			}
		})
	}
	return c
}

// BeginShutdown puts the App in the state of a shutdown that has begun,
// in memory: App.Done is closed (running handlers' contexts end;
// WebSocket connections are sent 1001) and every response carries
// Connection: close, while Do is still answered, as a request arriving
// on a kept connection during the drain is. It is how a test sends what an App answers only during
// Shutdown (readiness's 503, a WebSocket route's 503 to a handshake sent
// with Do and the Upgrade headers) and counts them in Coverage. There is
// no way back: the App is shut down for good when the test ends, as
// always. (After Shutdown itself, Do fails the test: the App is shut
// down and answers nothing in memory.)
func (c *Client) BeginShutdown() { drainhook.Begin(c.app) }

// App returns the App the client sends to.
func (c *Client) App() *fx.App { return c.app }

// Get starts a GET request for target, a path with an optional query
// ("/users/1", "/search?q=a"). Send it with Do.
func (c *Client) Get(target string) *Request { return c.Request(http.MethodGet, target) }

// Head starts a HEAD request for target.
func (c *Client) Head(target string) *Request { return c.Request(http.MethodHead, target) }

// Post starts a POST request for target.
func (c *Client) Post(target string) *Request { return c.Request(http.MethodPost, target) }

// Put starts a PUT request for target.
func (c *Client) Put(target string) *Request { return c.Request(http.MethodPut, target) }

// Patch starts a PATCH request for target.
func (c *Client) Patch(target string) *Request { return c.Request(http.MethodPatch, target) }

// Delete starts a DELETE request for target.
func (c *Client) Delete(target string) *Request { return c.Request(http.MethodDelete, target) }

// Options starts an OPTIONS request for target.
func (c *Client) Options(target string) *Request { return c.Request(http.MethodOptions, target) }

// Request starts a request with any method for target.
func (c *Client) Request(method, target string) *Request {
	return &Request{c: c, method: method, target: target, host: "example.com"}
}

// Request is a request being built. Its methods set one part each and
// return the Request, so calls chain; Do sends it. A Request may be sent
// more than once; it must not be changed while Do runs.
type Request struct {
	c       *Client
	method  string
	target  string
	host    string
	query   []string // name, value pairs
	headers []string // name, value pairs, in order
	body    []byte
	err     string // a builder misuse, reported by Do
}

// Header adds a request header line: a second call with the same name
// adds a second line (several values), it does not replace the first;
// SetHeader replaces. Names and values must not contain CR or LF: Do
// fails the test rather than send a request other than the one written.
func (r *Request) Header(name, value string) *Request {
	if strings.ContainsAny(name, "\r\n:") || name == "" || strings.ContainsAny(value, "\r\n") {
		r.err = "header " + strconv.Quote(name) + ": " + strconv.Quote(value) + " cannot be sent as one header line"
	}
	r.headers = append(r.headers, name, value)
	return r
}

// SetHeader sets a request header to value alone: the lines added
// before under that name (compared case-insensitively, by Header,
// SetHeader, Bearer or Body's Content-Type) are dropped.
func (r *Request) SetHeader(name, value string) *Request {
	kept := r.headers[:0]
	for i := 0; i+1 < len(r.headers); i += 2 {
		if !strings.EqualFold(r.headers[i], name) {
			kept = append(kept, r.headers[i], r.headers[i+1])
		}
	}
	r.headers = kept
	return r.Header(name, value)
}

// hasHeader reports whether a header line named name (any case) was set.
func (r *Request) hasHeader(name string) bool {
	for i := 0; i+1 < len(r.headers); i += 2 {
		if strings.EqualFold(r.headers[i], name) {
			return true
		}
	}
	return false
}

// Host sets the Host header (default "example.com", as net/http/httptest).
func (r *Request) Host(host string) *Request {
	if strings.ContainsAny(host, "\r\n") {
		r.err = "host " + strconv.Quote(host) + " cannot be sent as one header line"
	}
	r.host = host
	return r
}

// Bearer sets "Authorization: Bearer token".
func (r *Request) Bearer(token string) *Request {
	return r.Header("Authorization", "Bearer "+token)
}

// Query adds name=value to the query string (URL-encoded), after any query
// already in the target.
func (r *Request) Query(name, value string) *Request {
	r.query = append(r.query, name, value)
	return r
}

// JSON sets the body to v encoded with encoding/json, and Content-Type to
// application/json. A value json.Marshal refuses fails the test in Do.
// A string, []byte or json.RawMessage is sent as it is (already JSON).
func (r *Request) JSON(v any) *Request {
	b, err := jsonBytes(v)
	if err != nil {
		r.err = "JSON body: " + err.Error()
	}
	return r.Body("application/json", b)
}

// Body sets the body and its Content-Type ("" sends no Content-Type).
func (r *Request) Body(contentType string, body []byte) *Request {
	r.body = body
	if contentType != "" {
		r.Header("Content-Type", contentType)
	}
	return r
}

// String is the request line, for failure messages ("GET /users/1").
func (r *Request) String() string {
	return r.method + " " + r.uri()
}

func (r *Request) uri() string {
	if len(r.query) == 0 {
		return r.target
	}
	var b strings.Builder
	b.WriteString(r.target)
	sep := byte('?')
	if strings.Contains(r.target, "?") {
		sep = '&'
	}
	for i := 0; i+1 < len(r.query); i += 2 {
		b.WriteByte(sep)
		sep = '&'
		b.WriteString(url.QueryEscape(r.query[i]))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(r.query[i+1]))
	}
	return b.String()
}

// appendWire appends the request for uri as HTTP/1.1 bytes.
func (r *Request) appendWire(dst []byte, uri string) []byte {
	dst = append(dst, r.method...)
	dst = append(dst, ' ')
	dst = append(dst, uri...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, r.host...)
	dst = append(dst, "\r\n"...)
	for i := 0; i+1 < len(r.headers); i += 2 {
		dst = append(dst, r.headers[i]...)
		dst = append(dst, ": "...)
		dst = append(dst, r.headers[i+1]...)
		dst = append(dst, "\r\n"...)
	}
	if len(r.body) > 0 || r.method == http.MethodPost || r.method == http.MethodPut || r.method == http.MethodPatch {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(r.body)), 10)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	return append(dst, r.body...)
}

// wire holds the buffers of one exchange, pooled: the request and the
// response as written, reused across requests.
type wire struct {
	req, resp []byte
}

var wirePool = sync.Pool{New: func() any { return new(wire) }}

// maxPooledWire bounds the buffers returned to wirePool, so that one test
// with a large body does not keep megabytes alive for every later request.
const maxPooledWire = 64 << 10

// Do sends the request through the App's fasthttp server and returns the
// response, read whole. It fails the test (t.Fatalf) when the request
// could not be built or served (the App was shut down): the test cannot go
// on without a response. Responses the server writes itself (400 for a
// malformed request, 413 over the body limit) are responses, not
// failures.
//
// Cost: one TestRaw exchange (see fx.App.TestRaw), plus writing the
// request into a pooled buffer, copying the response once and finding its
// status and body in place: about 0.4 µs and 2
// allocations (the Response and its bytes) over TestRaw, about 2.4× a
// direct call of the App's handler (see the package documentation). Headers are
// parsed by Response.Header, the envelope by the assertions that need it.
func (r *Request) Do() *Response {
	// t.Helper is called on the failure paths only: it takes a lock and
	// walks the stack, a fifth of what Do cost when called on every request.
	t := r.c.t
	if r.err != "" {
		// r.String(), not r: passing r to Fatalf would move every Request
		// to the heap.
		t.Helper()
		t.Fatalf("fxtest: %s: %s", r.String(), r.err)
	}
	w := wirePool.Get().(*wire)
	uri := r.uri()
	w.req = r.appendWire(w.req[:0], uri)
	var err error
	w.resp, err = r.c.app.TestRaw(w.resp[:0], w.req)
	if err != nil {
		t.Helper()
		t.Fatalf("fxtest: %s %s: %v", r.method, uri, err)
	}
	// One copy of the response holds the head and the body (a chunked
	// body is decoded in place), owned by the Response.
	raw := bytes.Clone(w.resp)
	if cap(w.req) <= maxPooledWire && cap(w.resp) <= maxPooledWire {
		wirePool.Put(w)
	}
	head, body, status, err := parseResponse(raw, r.method == http.MethodHead)
	if err != nil {
		t.Helper()
		t.Fatalf("fxtest: %s %s: reading the response: %v\n%s", r.method, uri, err, raw)
	}
	resp := &Response{
		t:      t,
		method: r.method,
		uri:    uri,
		Status: status,
		Body:   body,
		head:   head,
	}
	if r.c.contract != nil {
		r.c.contract.checkResponse(resp)
	}
	return resp
}

// jsonBytes is v as JSON: a string, []byte or json.RawMessage as it is
// (already JSON), anything else through json.Marshal.
func jsonBytes(v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return []byte(v), nil
	case []byte:
		return v, nil
	case json.RawMessage:
		return v, nil
	}
	return json.Marshal(v)
}
