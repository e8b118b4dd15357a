//go:build !race

// The race detector makes sync.Pool drop items at random, so allocation
// counts are only meaningful without it.

package fxtest_test

import (
	"testing"

	"github.com/fxhq/fx/fxtest"
	"github.com/valyala/fasthttp"
)

// What a request through the server and through Do allocate beyond the
// handler's own allocations (the benchmark route's, measured by calling
// app.Handler() directly): TestRaw nothing (its in-memory connection is
// recycled; it was allocated per exchange), Do two, the Response and the
// one copy of the response bytes it owns (it was three: the Request also
// escaped to the heap, through t.Fatalf's arguments).
func TestDoAllocatesOnlyTheResponse(t *testing.T) {
	app := benchApp()
	c := fxtest.New(t, app)
	h := app.Handler()
	var rc fasthttp.RequestCtx
	direct := testing.AllocsPerRun(200, func() { serveDirect(h, &rc) })
	req := []byte("GET /users/1 HTTP/1.1\r\nHost: example.com\r\n\r\n")
	var out []byte
	raw := testing.AllocsPerRun(200, func() { out, _ = app.TestRaw(out[:0], req) })
	do := testing.AllocsPerRun(200, func() { c.Get("/users/1").Do() })
	if raw != direct || do != direct+2 {
		t.Errorf("allocations per request: direct %v, TestRaw %v (want %v), Do %v (want %v)", direct, raw, direct, do, direct+2)
	}
}
