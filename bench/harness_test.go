package bench

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// runner sends one prepared request to an implementation, in process, as
// often as asked: fasthttp handlers get one reused RequestCtx (reset
// between requests as fasthttp's server resets it), net/http handlers one
// reused httptest request and a reusable ResponseWriter (so that neither
// side pays for the harness).
type runner interface {
	do()
	status() int
	contentType() string
	body() []byte
}

func newRunner(tb testing.TB, impl Impl, method, path, body string) runner {
	tb.Helper()
	if impl.FastHTTP != nil {
		r := &fastRunner{h: impl.FastHTTP}
		var req fasthttp.Request
		req.Header.SetMethod(method)
		req.SetRequestURI(path)
		req.Header.SetHost("127.0.0.1")
		if body != "" {
			req.Header.SetContentType("application/json")
			req.SetBodyString(body)
		}
		r.ctx.Init(&req, nil, nil)
		return r
	}
	r := &stdRunner{h: impl.HTTP, src: []byte(body)}
	r.rb.r = bytes.NewReader(r.src)
	r.req = httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		r.req.Header.Set("Content-Type", "application/json")
	}
	r.w.h = http.Header{}
	return r
}

type fastRunner struct {
	h   fasthttp.RequestHandler
	ctx fasthttp.RequestCtx
}

func (r *fastRunner) do() {
	r.ctx.Response.Reset()
	r.ctx.ResetUserValues()
	r.h(&r.ctx)
}
func (r *fastRunner) status() int         { return r.ctx.Response.StatusCode() }
func (r *fastRunner) contentType() string { return string(r.ctx.Response.Header.ContentType()) }
func (r *fastRunner) body() []byte        { return r.ctx.Response.Body() }

type stdRunner struct {
	h   http.Handler
	req *http.Request
	src []byte
	rb  rewindBody
	w   recorder
}

func (r *stdRunner) do() {
	r.rb.r.Reset(r.src)
	r.req.Body = &r.rb
	r.w.reset()
	r.h.ServeHTTP(&r.w, r.req)
}
func (r *stdRunner) status() int         { return r.w.code }
func (r *stdRunner) contentType() string { return r.w.h.Get("Content-Type") }
func (r *stdRunner) body() []byte        { return r.w.buf }

type rewindBody struct{ r *bytes.Reader }

func (b *rewindBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *rewindBody) Close() error               { return nil }

// recorder is a reusable http.ResponseWriter.
type recorder struct {
	h    http.Header
	code int
	buf  []byte
}

func (w *recorder) reset() {
	clear(w.h)
	w.code = 0
	w.buf = w.buf[:0]
}
func (w *recorder) Header() http.Header { return w.h }
func (w *recorder) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *recorder) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = 200
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}
