package nethttp_test

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/nethttp"
	"github.com/valyala/fasthttp"
)

// Config.Compression under the adapter: the compressed body, its
// Content-Encoding, Content-Length and Vary reach the http.ResponseWriter,
// error envelopes included.
func TestCompressionThroughAdapter(t *testing.T) {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler), Compression: &fx.CompressionConfig{}})
	page := strings.Repeat(`{"id":1,"name":"a name","tags":["x","y"]},`, 100)
	app.Get("/page", func(c *fx.Ctx) error { return c.Send(200, "application/json", []byte(page)) })
	h := nethttp.Handler(app)
	long := "/nope/" + strings.Repeat("segment/", 150)
	for _, tc := range []struct {
		path, want string
		status     int
	}{
		{"/page", page, 200},
		{long, `{"error":{"code":"FX_NOT_FOUND","message":"Route GET ` + long + ` not found"}}`, 404},
	} {
		req := httptest.NewRequest("GET", tc.path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		res := rec.Result()
		b, _ := io.ReadAll(res.Body)
		if rec.Code != tc.status || res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("Vary") != "Accept-Encoding" ||
			res.Header.Get("Content-Length") != strconv.Itoa(len(b)) {
			t.Fatalf("%.20s: %d %v (%d bytes)", tc.path, rec.Code, res.Header, len(b))
		}
		if got, err := fasthttp.AppendGunzipBytes(nil, b); err != nil || string(got) != tc.want {
			t.Errorf("%.20s: decodes to %.60q (%v), want %.60q", tc.path, got, err, tc.want)
		}
	}
}
