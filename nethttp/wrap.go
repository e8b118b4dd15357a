package nethttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// Wrap mounts an http.Handler as an fx handler, so existing net/http code
// (http.FileServer, pprof, a generated API server, a third-party router)
// runs inside an fx App behind its middleware, hook and envelopes:
//
//	app.Get("/debug/pprof/*rest", nethttp.Wrap(http.DefaultServeMux))
//
// The wrapped handler receives an *http.Request built from the fx request:
// method, URL and RequestURI, Proto, Host, every header value, the body
// (already read, as a bytes reader), RemoteAddr, TLS, and a Context that
// is done when the client goes away under Handler (see Context) and when
// the fx chain returns in any case. What it writes — status, headers
// (multi-valued), cookies, body — becomes the fx response; like net/http,
// headers changed after WriteHeader are ignored, a missing Content-Type is
// sniffed from the body, and an informational (1xx) status is dropped.
// The response is buffered: it is sent when the wrapped handler returns,
// so the writer implements neither http.Flusher nor http.Hijacker (ask
// http.NewResponseController and you get http.ErrNotSupported).
//
// Failures reach fx's error boundary with their raw value, unlike
// fasthttpadaptor: a panic in the wrapped handler is not recovered here,
// so fx's boundary recovers it and the hook receives exactly the panic
// value (http.ErrAbortHandler included: under fx it is a 500 like any
// panic); an error the wrapped handler reports with Fail is returned as
// is. In both cases the body and status it wrote are replaced by the
// envelope, and headers it set are kept, as for any fx failure.
//
// Cost: one *http.Request, its header map and URL, a context value and
// the writer per request, plus c.Context() on the fasthttp transport.
func Wrap(h http.Handler) fx.Handler {
	if h == nil {
		panic("nethttp: Wrap of a nil http.Handler")
	}
	return func(c *fx.Ctx) error {
		rc := c.RequestCtx()
		w := &responseWriter{resp: &rc.Response, header: make(http.Header)}
		ctx, cancel := context.WithCancel(context.WithValue(Context(c), failKey{}, w))
		defer func() { w.done = true; cancel() }() // also when h panics
		r, err := wrappedRequest(ctx, c, rc)
		if err != nil {
			return err
		}
		h.ServeHTTP(w, r)
		w.finish()
		return w.failure
	}
}

// Fail hands err to the fx error boundary from a handler mounted with
// Wrap: when the wrapped handler returns, the fx handler returns err
// itself (the hook receives this very value; an *fx.Error gives its own
// status and envelope, anything else 500 FX_INTERNAL_ERROR). The first
// call wins. Fail reports whether r is served through Wrap; outside Wrap
// it does nothing and returns false, so a handler can fall back to
// http.Error.
//
// r may be any request derived from the one Wrap passed (r.WithContext
// keeps the link), so Fail works behind net/http middleware.
func Fail(r *http.Request, err error) bool {
	w, ok := r.Context().Value(failKey{}).(*responseWriter)
	if !ok {
		return false
	}
	if w.failure == nil {
		if err == nil {
			err = errors.New("nethttp: Fail called with a nil error")
		}
		w.failure = err
	}
	return true
}

type failKey struct{}

// wrappedRequest builds the *http.Request Wrap hands to the handler.
func wrappedRequest(ctx context.Context, c *fx.Ctx, rc *fasthttp.RequestCtx) (*http.Request, error) {
	req := &rc.Request
	uri := string(req.Header.RequestURI())
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return nil, &AdapterError{Op: OpTranslateRequest, Err: err}
	}
	proto := string(req.Header.Protocol())
	major, minor, ok := http.ParseHTTPVersion(proto)
	if !ok {
		proto, major, minor = "HTTP/1.1", 1, 1
	}
	hdr := make(http.Header)
	for k, v := range req.Header.All() {
		if string(k) == "Host" {
			continue // net/http keeps it in Request.Host
		}
		key := http.CanonicalHeaderKey(string(k))
		hdr[key] = append(hdr[key], string(v))
	}
	body := req.Body()
	var rbody io.ReadCloser = http.NoBody
	if len(body) > 0 {
		rbody = io.NopCloser(bytes.NewReader(body))
	}
	r := http.Request{
		Method:        c.Method(),
		URL:           u,
		Proto:         proto,
		ProtoMajor:    major,
		ProtoMinor:    minor,
		Header:        hdr,
		Body:          rbody,
		ContentLength: int64(len(body)),
		Host:          string(req.Host()),
		RemoteAddr:    rc.RemoteAddr().String(),
		RequestURI:    uri,
		TLS:           rc.TLSConnectionState(),
	}
	return r.WithContext(ctx), nil
}

// OpTranslateRequest: Wrap could not build an *http.Request from the fx
// request (a request target net/http cannot parse).
const OpTranslateRequest = "translate request"

var errWriteAfterReturn = errors.New("nethttp: write after the wrapped handler returned")

// responseWriter is the http.ResponseWriter of a wrapped handler: it
// writes into the fasthttp response.
type responseWriter struct {
	resp        *fasthttp.Response
	header      http.Header
	status      int
	wroteHeader bool
	sniff       bool // Content-Type is absent: detect it from the body
	done        bool
	failure     error // from Fail
}

func (w *responseWriter) Header() http.Header { return w.header }

func (w *responseWriter) WriteHeader(code int) {
	if w.done || w.wroteHeader {
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code)) // as net/http
	}
	if code < 200 {
		return // informational: fasthttp sends only the final response
	}
	w.wroteHeader, w.status = true, code
	w.resp.SetStatusCode(code)
	rh := &w.resp.Header
	w.dropReplaced(rh)
	for k, vs := range w.header {
		switch k {
		case "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
			"Proxy-Connection", "Upgrade", "Te", "Trailer":
			continue
		case "Content-Type":
			if len(vs) == 0 || vs[0] == "" {
				rh.SetNoDefaultContentType(true) // set to nil: no Content-Type
			} else {
				rh.SetContentType(vs[0])
			}
			continue
		}
		for _, v := range vs {
			rh.Add(k, v) // Set-Cookie accumulates: fx middleware may have set some
		}
	}
	_, hasType := w.header["Content-Type"]
	w.sniff = !hasType
}

// startBody is what Write and WriteString do before appending: refuse a
// write after the handler returned, send the implicit 200, and refuse a
// body where the status allows none.
func (w *responseWriter) startBody() error {
	if w.done {
		return errWriteAfterReturn
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.status == http.StatusNoContent || w.status == http.StatusNotModified {
		return http.ErrBodyNotAllowed
	}
	return nil
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if err := w.startBody(); err != nil {
		return 0, err
	}
	w.resp.AppendBody(p)
	return len(p), nil
}

// dropReplaced removes from rh the headers the wrapped handler sets too
// (its values replace those of fx middleware), keeping the order of the
// rest: fasthttp's Del swaps entries, which would reorder the values of
// other multi-valued headers, so when something must go, every plain
// header is taken out and the survivors are put back in order.
func (w *responseWriter) dropReplaced(rh *fasthttp.ResponseHeader) {
	replaced := false
	for k := range w.header {
		if !specialResponseHeader(k) && rh.Peek(k) != nil {
			replaced = true
			break
		}
	}
	if !replaced {
		return
	}
	type kv struct{ k, v string }
	var keep []kv
	var keys []string
	for k, v := range rh.All() {
		key := string(k)
		if specialResponseHeader(key) {
			continue
		}
		if !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
		if _, mine := w.header[key]; !mine {
			keep = append(keep, kv{key, string(v)})
		}
	}
	for _, k := range keys {
		rh.Del(k)
	}
	for _, e := range keep {
		rh.Add(e.k, e.v)
	}
}

// specialResponseHeader reports the headers fasthttp keeps outside its
// plain list (or that Wrap handles itself).
func specialResponseHeader(k string) bool {
	switch k {
	case "Content-Type", "Content-Length", "Content-Encoding", "Server", "Set-Cookie",
		"Connection", "Transfer-Encoding", "Trailer", "Keep-Alive", "Proxy-Connection", "Upgrade", "Te":
		return true
	}
	return false
}

// WriteString lets io.WriteString skip a conversion.
func (w *responseWriter) WriteString(s string) (int, error) {
	if err := w.startBody(); err != nil {
		return 0, err
	}
	w.resp.AppendBodyString(s)
	return len(s), nil
}

// finish completes the response as net/http would when the handler
// returns: an implicit 200 and a sniffed Content-Type.
func (w *responseWriter) finish() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.sniff {
		if body := w.resp.Body(); len(body) > 0 {
			w.resp.Header.SetContentType(http.DetectContentType(body))
		}
	}
	w.done = true
}
