package fx_test

import (
	"testing"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// benchHandler runs h as the GET / route on a reused RequestCtx.
func benchHandler(b *testing.B, h fx.Handler, hdr ...string) {
	app := quiet()
	app.Get("/", h)
	handler := app.Handler()
	var req fasthttp.Request
	req.SetRequestURI("/")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	var rc fasthttp.RequestCtx
	rc.Init(&req, nil, nil)
	b.ReportAllocs()
	for b.Loop() {
		rc.Response.Reset()
		handler(&rc)
	}
	if rc.Response.StatusCode() >= 400 {
		b.Fatalf("%d %s", rc.Response.StatusCode(), rc.Response.Body())
	}
}

func BenchmarkSetCookie(b *testing.B) {
	benchHandler(b, func(c *fx.Ctx) error {
		return c.SetCookie(fx.Cookie{Name: "sid", Value: "0123456789abcdef", MaxAge: 3600})
	})
}

func BenchmarkCookie(b *testing.B) {
	var sink string
	benchHandler(b, func(c *fx.Ctx) error { sink = c.Cookie("sid"); return nil }, "Cookie", "a=1; sid=0123456789abcdef")
	_ = sink
}

func BenchmarkRedirect(b *testing.B) {
	benchHandler(b, func(c *fx.Ctx) error { return c.Redirect(302, "/login") })
}

func BenchmarkBare(b *testing.B) {
	benchHandler(b, func(c *fx.Ctx) error { return nil })
}
