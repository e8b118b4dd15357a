package fx_test

import (
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/fxhq/fx"
)

// breachSecret is the CSRF token the BREACH page holds; breachRight
// guesses it, breachWrong is a guess of the same length that shares no
// character with it.
const (
	breachSecret = "7Hq2Zt9LmX4pWc8RvN3k"
	breachRight  = breachSecret
	breachWrong  = "Bd5YgS1eJu6oTa0Qi2Fx"
)

// breachPage is a page that holds the secret and reflects q next to it.
func breachPage(c *fx.Ctx) error {
	return c.Send(200, "text/html; charset=utf-8",
		[]byte(`<!doctype html><html><head><title>Search</title></head><body><form method="post" action="/search">`+
			`<input type="hidden" name="csrf_token" value="`+breachSecret+`"></form>`+
			`<p>You searched for: `+c.Query("q")+`</p></body></html>`))
}

// breachApp serves breachPage compressed (MinSize 64, so that the small
// page qualifies) at /page and behind each opt-out.
func breachApp(t *testing.T, cfg fx.CompressionConfig) *fx.App {
	cfg.MinSize = 64
	return compressedApp(t, cfg, func(app *fx.App) {
		app.Get("/page", breachPage)
		app.Get("/reads-cookie", func(c *fx.Ctx) error { _ = c.Cookie("session"); return breachPage(c) })
		app.Get("/no-compress", func(c *fx.Ctx) error { c.NoCompress(); return breachPage(c) })
		app.Route(fx.Route{Method: "GET", Path: "/route-opt-out", Middleware: []fx.Middleware{noCompression}, Handler: breachPage})
		app.Get("/no-transform", func(c *fx.Ctx) error {
			c.SetHeader("Cache-Control", "private, no-transform")
			return breachPage(c)
		})
	})
}

// breachSizes returns the body sizes on the wire for the right and the
// wrong guess, and the Content-Encoding of the right one.
func breachSizes(t *testing.T, app *fx.App, path, coding string, header ...string) (right, wrong int, ce string) {
	t.Helper()
	size := func(guess string) (int, string) {
		req := httptest.NewRequest("GET", path+"?q="+url.QueryEscape(guess), nil)
		req.Header.Set("Accept-Encoding", coding)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return int(resp.ContentLength), resp.Header.Get("Content-Encoding")
	}
	right, ce = size(breachRight)
	wrong, _ = size(breachWrong)
	return right, wrong, ce
}

// noCompression opts a route out of compression from its middleware.
func noCompression(c *fx.Ctx, next fx.Next) error {
	c.NoCompress()
	return next()
}

// TestCompressionBREACH measures the BREACH signal: compressed, the page
// is shorter when the reflected guess matches the secret, with every
// coding; each opt-out (Ctx.NoCompress in the handler or in the route's middleware,
// Cache-Control: no-transform, SkipCredentialed with a Cookie or an
// Authorization header) sends it uncompressed, and both guesses then give
// the same length.
func TestCompressionBREACH(t *testing.T) {
	app := breachApp(t, fx.CompressionConfig{})
	for _, coding := range []string{"gzip", "br", "zstd"} {
		right, wrong, ce := breachSizes(t, app, "/page", coding)
		t.Logf("%s: right guess %d bytes, wrong guess %d bytes", coding, right, wrong)
		if ce != coding || right >= wrong {
			t.Errorf("%s: %q, right guess %d bytes, wrong %d: want compressed and shorter", coding, ce, right, wrong)
		}
		for _, path := range []string{"/no-compress", "/route-opt-out", "/no-transform"} {
			if right, wrong, ce := breachSizes(t, app, path, coding); ce != "" || right != wrong {
				t.Errorf("%s %s: %q, right guess %d bytes, wrong %d: want identity, equal", coding, path, ce, right, wrong)
			}
		}
	}
	t.Logf("uncompressed: %d bytes", func() int { r, _, _ := breachSizes(t, app, "/no-compress", "gzip"); return r }())

	skip := breachApp(t, fx.CompressionConfig{SkipCredentialed: true})
	for _, cred := range [][]string{{"Cookie", "session=s1"}, {"Authorization", "Bearer abc"}} {
		for _, path := range []string{"/page", "/reads-cookie"} {
			if right, wrong, ce := breachSizes(t, skip, path, "gzip", cred...); ce != "" || right != wrong {
				t.Errorf("SkipCredentialed, %s %s: %q, right guess %d bytes, wrong %d: want identity, equal", path, cred[0], ce, right, wrong)
			}
		}
	}
	if _, _, ce := breachSizes(t, skip, "/page", "gzip"); ce != "gzip" {
		t.Errorf("SkipCredentialed, no credentials: Content-Encoding %q, want gzip", ce)
	}
}
