package fx_test

import (
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
)

// benchHandler runs h as the GET / route, with the header pairs hdr, on
// a reused RequestCtx; it must answer status.
func benchHandler(b *testing.B, status int, h fx.Handler, hdr ...string) {
	app := quiet()
	app.Get("/", h)
	rc := kittest.RequestCtx("GET", "/")
	for i := 0; i+1 < len(hdr); i += 2 {
		rc.Request.Header.Add(hdr[i], hdr[i+1])
	}
	kittest.BenchCtx(b, app.Handler(), rc, status)
}

func BenchmarkSetCookie(b *testing.B) {
	benchHandler(b, 200, func(c *fx.Ctx) error {
		return c.SetCookie(fx.Cookie{Name: "sid", Value: "0123456789abcdef", MaxAge: 3600})
	})
}

func BenchmarkRedirect(b *testing.B) {
	benchHandler(b, 302, func(c *fx.Ctx) error { return c.Redirect(302, "/login") })
}

func BenchmarkBare(b *testing.B) {
	benchHandler(b, 200, func(c *fx.Ctx) error { return nil })
}
