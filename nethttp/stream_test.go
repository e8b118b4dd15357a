package nethttp_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/nethttp"
)

// Ctx.Stream and Ctx.SSE work under the adapter: the stream is copied to
// the http.ResponseWriter, flushed as written.
func TestStreamAndSSEThroughAdapter(t *testing.T) {
	app := fx.New()
	app.Get("/stream", func(c *fx.Ctx) error {
		return c.Stream("text/plain", func(w *bufio.Writer) error {
			w.WriteString("a")
			if err := w.Flush(); err != nil {
				return err
			}
			w.WriteString("b")
			return nil
		})
	})
	app.Get("/sse", func(c *fx.Ctx) error {
		return c.SSE(func(e *fx.EventWriter) error { return e.Send(fx.Event{Data: "hi"}) })
	})
	srv := httptest.NewServer(nethttp.Handler(app))
	defer srv.Close()
	for path, want := range map[string]string{"/stream": "ab", "/sse": "data: hi\n\n"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != want {
			t.Errorf("%s: %q %v", path, b, err)
		}
	}
}
