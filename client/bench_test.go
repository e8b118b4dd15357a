package client

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// benchApp serves GET /small (a short JSON answer) and GET /chunk (16 KiB
// of JSON) on loopback.
func benchApp(b *testing.B) string {
	app := quietApp()
	app.Get("/small", func(c *fx.Ctx) error { return c.JSON(200, map[string]string{"id": "o-1"}) })
	chunk := strings.Repeat("x", 16<<10)
	app.Get("/chunk", func(c *fx.Ctx) error { return c.JSON(200, chunk) })
	return serve(b, app)
}

// BenchmarkDo is one successful call over loopback per iteration, on
// fasthttp with the client New builds, on fasthttp with a FastClient the
// caller gave (the answer read as a bounded stream), and on net/http.
//
//	go test -run '^$' -bench 'Do|RoundTripper' -benchmem ./client
func BenchmarkDo(b *testing.B) {
	base := benchApp(b)
	for _, tr := range []struct {
		name string
		cfg  Config
	}{
		{"fasthttp", Config{}},
		{"fasthttp-given", Config{FastClient: &fasthttp.Client{}}},
		{"net-http", Config{HTTPClient: &http.Client{}}},
	} {
		for _, path := range []string{"/small", "/chunk"} {
			b.Run(tr.name+path, func(b *testing.B) {
				cfg := tr.cfg
				cfg.BaseURL = base
				c := New(cfg)
				ctx := context.Background()
				r := &Request{Method: "GET", Path: path}
				b.ReportAllocs()
				for b.Loop() {
					if resp, err := c.Do(ctx, r); err != nil || resp.Status != 200 {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRoundTripper is the same call made by a net/http caller through
// c.HTTPClient(): Do's cost plus the request copy and the *http.Response.
func BenchmarkRoundTripper(b *testing.B) {
	base := benchApp(b)
	for _, tr := range []struct {
		name string
		cfg  Config
	}{{"fasthttp", Config{}}, {"net-http", Config{HTTPClient: &http.Client{}}}} {
		b.Run(tr.name, func(b *testing.B) {
			cfg := tr.cfg
			cfg.BaseURL = base
			hc := New(cfg).HTTPClient()
			b.ReportAllocs()
			for b.Loop() {
				resp, err := hc.Get(base + "/small")
				if err != nil || resp.StatusCode != 200 {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
