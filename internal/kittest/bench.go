package kittest

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// RequestCtx returns a RequestCtx for method and path, initialised as
// fasthttp's server would, for calling a handler directly.
func RequestCtx(method, path string) *fasthttp.RequestCtx {
	var rc fasthttp.RequestCtx
	rc.Init(new(fasthttp.Request), nil, nil)
	rc.Request.Header.SetMethod(method)
	rc.Request.SetRequestURI(path)
	return &rc
}

// Bench runs h on method and path b.N times, in process, after checking
// once that it answers status; allocations are reported.
func Bench(b *testing.B, h fasthttp.RequestHandler, method, path string, status int) {
	b.Helper()
	BenchCtx(b, h, RequestCtx(method, path), status)
}

// BenchCtx is Bench on a request the caller built (RequestCtx, then
// headers or a body): rc is served b.N times, its request kept, its
// response and user values reset between runs.
func BenchCtx(b *testing.B, h fasthttp.RequestHandler, rc *fasthttp.RequestCtx, status int) {
	b.Helper()
	h(rc)
	if rc.Response.StatusCode() != status {
		b.Fatalf("status %d, want %d: %s", rc.Response.StatusCode(), status, rc.Response.Body())
	}
	b.ReportAllocs()
	for b.Loop() {
		rc.Response.Reset()
		rc.ResetUserValues() // as fasthttp's server does after each request
		h(rc)
	}
}

// BenchEach is BenchCtx on a request that changes between runs: each
// (when not nil) edits rc before every run, i counting from 0 (a fresh
// idempotency key, a URI a server would parse afresh), its cost in the
// figure; every response must have status. Allocations are reported.
func BenchEach(b *testing.B, h fasthttp.RequestHandler, rc *fasthttp.RequestCtx, status int, each func(rc *fasthttp.RequestCtx, i int)) {
	b.Helper()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		rc.Response.Reset()
		rc.ResetUserValues() // as fasthttp's server does after each request
		if each != nil {
			each(rc, i)
		}
		h(rc)
		if rc.Response.StatusCode() != status {
			b.Fatalf("status %d, want %d: %s", rc.Response.StatusCode(), status, rc.Response.Body())
		}
	}
}

// BenchPost runs h on POST uri with body (application/json) b.N times,
// in process, the request rebuilt each time as a new one is (the cost of
// setting it is in the figure); every response must have status.
// Allocations are reported.
func BenchPost(b *testing.B, h fasthttp.RequestHandler, uri, body string, status int) {
	b.Helper()
	var rc fasthttp.RequestCtx
	b.ReportAllocs()
	for b.Loop() {
		rc.Request.Reset()
		rc.Response.Reset()
		rc.ResetUserValues()
		rc.Request.Header.SetMethod("POST")
		rc.Request.SetRequestURI(uri)
		rc.Request.Header.SetContentType("application/json")
		rc.Request.SetBodyString(body)
		h(&rc)
		if rc.Response.StatusCode() != status {
			b.Fatalf("status %d, want %d: %s", rc.Response.StatusCode(), status, rc.Response.Body())
		}
	}
}

// BenchParallel is Bench under b.RunParallel: each goroutine serves its
// own RequestCtx for method and path, which setup (when not nil) completes
// first (headers, a per-goroutine key); every response must have status.
// Allocations are reported.
func BenchParallel(b *testing.B, h fasthttp.RequestHandler, method, path string, status int, setup func(*fasthttp.RequestCtx)) {
	b.Helper()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		rc := RequestCtx(method, path)
		if setup != nil {
			setup(rc)
		}
		for pb.Next() {
			rc.Response.Reset()
			rc.ResetUserValues() // as fasthttp's server does after each request
			h(rc)
			if rc.Response.StatusCode() != status {
				b.Fatalf("status %d, want %d: %s", rc.Response.StatusCode(), status, rc.Response.Body())
			}
		}
	})
}
