package fx

import (
	"bytes"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkPathStep: the one-path step alone, in front of a router that
// does nothing, on a plain path (the hot path: two comparisons, no
// allocation).
func BenchmarkPathStep(b *testing.B) {
	a := New(Config{})
	h := a.dispatch(new(staticRoutes), func(*fasthttp.RequestCtx) {}, nil)
	var rc fasthttp.RequestCtx
	rc.Request.SetRequestURI("/users/42/posts")
	rc.URI() // parsed, as the server has done before the handler runs
	b.ReportAllocs()
	for b.Loop() {
		h(&rc)
	}
}

// BenchmarkStaticRoute: routing a request to a route without parameters
// (handler and middleware empty) through the static table, against the
// one-path step and the radix walk that route it when the table is off.
func BenchmarkStaticRoute(b *testing.B) {
	for _, tc := range []struct{ name, path string }{
		{"hit", "/hello"},
		{"miss-param", "/users/42"},
		{"miss-404", "/nope/nothing/here"},
	} {
		for _, table := range []bool{true, false} {
			name := tc.name + "/table"
			if !table {
				name = tc.name + "/router"
			}
			b.Run(name, func(b *testing.B) {
				a := New(Config{})
				ok := func(*Ctx) error { return nil }
				for _, p := range []string{"/hello", "/error", "/panic", "/users/:id"} {
					a.Get(p, ok)
				}
				a.Post("/orders", ok)
				r, static, errs := a.buildRouter(a.specs, nil)
				if len(errs) > 0 {
					b.Fatal(errs)
				}
				r.NotFound = func(*fasthttp.RequestCtx) {}
				if !table {
					static = new(staticRoutes)
				}
				h := a.dispatch(static, r.Handler, r.NotFound)
				var rc fasthttp.RequestCtx
				rc.Request.SetRequestURI(tc.path)
				rc.URI()
				b.ReportAllocs()
				for b.Loop() {
					h(&rc)
				}
			})
		}
	}
}

// TestPlainPath: plainPath agrees with the two checks it fuses
// (bytes.Equal and a scan for '\') on paths of every length up to three
// words, with a '\' or a differing byte at every position, in the words
// and in the tail alike.
func TestPlainPath(t *testing.T) {
	want := func(orig, norm []byte) bool {
		return bytes.Equal(orig, norm) && bytes.IndexByte(orig, '\\') < 0
	}
	check := func(orig, norm []byte) {
		t.Helper()
		if got := plainPath(orig, norm); got != want(orig, norm) {
			t.Errorf("plainPath(%q, %q) = %v", orig, norm, got)
		}
	}
	for n := range 26 {
		p := []byte(strings.Repeat("/abcdefg", 4)[:n])
		check(p, bytes.Clone(p))
		if n > 0 {
			check(p, p[:n-1]) // a shorter normalised path
		}
		for i := range n {
			q := bytes.Clone(p)
			q[i] = '\\'
			check(q, bytes.Clone(q)) // a '\' in both
			check(p, q)              // a byte that differs
			check(q, p)              // and the other way round
			r := bytes.Clone(p)
			r[i] ^= 0x80 // differs in the top bit only
			check(p, r)
		}
	}
}
