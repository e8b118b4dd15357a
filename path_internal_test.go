package fx

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkPathStep: the one-path step alone, in front of a router that
// does nothing, on a plain path (the hot path: two comparisons, no
// allocation).
func BenchmarkPathStep(b *testing.B) {
	a := New(Config{})
	h := a.pathRouted(func(*fasthttp.RequestCtx) {}, nil)
	var rc fasthttp.RequestCtx
	rc.Request.SetRequestURI("/users/42/posts")
	rc.URI() // parsed, as the server has done before the handler runs
	b.ReportAllocs()
	for b.Loop() {
		h(&rc)
	}
}
