package fx_test

import (
	"strconv"
	"testing"

	"github.com/fxhq/fx"
)

// BenchmarkCompress: GET of a JSON body (jsonBody: repeated keys, varied
// values) through the booted handler with Config.Compression at its
// defaults, for each coding and body size; "identity" is the same request
// without Accept-Encoding, the cost to subtract. ns/KiB is the whole
// request's time per KiB of body; ratio is the encoded size over the
// original.
//
//	go test -run '^$' -bench Compress -benchmem .
func BenchmarkCompress(b *testing.B) {
	for _, size := range []int{1 << 10, 16 << 10, 128 << 10} {
		body := jsonBody(size)
		app := quiet(fx.Config{Compression: &fx.CompressionConfig{}})
		app.Get("/json", func(c *fx.Ctx) error { return c.Send(200, "application/json", body) })
		h := app.Handler()
		for _, enc := range []string{"identity", "gzip", "br", "zstd"} {
			b.Run(enc+"/"+strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
				rc, serve := benchCtx(h, "GET", "/json")
				if enc != "identity" {
					rc.Request.Header.Set("Accept-Encoding", enc)
				}
				serve()
				if got := string(rc.Response.Header.ContentEncoding()); rc.Response.StatusCode() != 200 || (enc != "identity") != (got == enc) {
					b.Fatalf("%d, Content-Encoding %q", rc.Response.StatusCode(), got)
				}
				ratio := float64(len(rc.Response.Body())) / float64(len(body))
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					serve()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(float64(len(body))/1024), "ns/KiB")
				b.ReportMetric(ratio, "ratio")
			})
		}
	}
}

// BenchmarkCompressSkipped: what Config.Compression costs a response it
// does not compress (a small JSON body, under MinSize), against the same
// App without it ("off").
func BenchmarkCompressSkipped(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		var cfg fx.Config
		if on {
			name, cfg.Compression = "on", &fx.CompressionConfig{}
		}
		b.Run(name, func(b *testing.B) {
			app := quiet(cfg)
			app.Get("/hello", func(c *fx.Ctx) error { return c.JSON(200, small{ID: benchID, Name: "fx", OK: true}) })
			rc, serve := benchCtx(app.Handler(), "GET", "/hello")
			rc.Request.Header.Set("Accept-Encoding", "gzip, deflate, br, zstd")
			serve()
			if rc.Response.StatusCode() != 200 || len(rc.Response.Header.ContentEncoding()) > 0 {
				b.Fatalf("%d %q", rc.Response.StatusCode(), rc.Response.Header.ContentEncoding())
			}
			b.ReportAllocs()
			for b.Loop() {
				serve()
			}
		})
	}
}
