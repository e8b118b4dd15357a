package websocket_test

import (
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	gws "github.com/gorilla/websocket"
)

// served is an App serving on a loopback port for one test.
type served struct {
	app  *fx.App
	addr string
	logs *kittest.LogBuffer
}

// serve serves app (built by build, which registers its routes) on
// 127.0.0.1 with fxtest.Serve, which shuts it down at the end of the
// test.
func serve(t testing.TB, build func(app *fx.App)) *served {
	t.Helper()
	logs := &kittest.LogBuffer{}
	app := fx.New(fx.Config{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	build(app)
	return &served{app: app, addr: fxtest.Serve(t, app), logs: logs}
}

// dial opens a WebSocket to path with gorilla's client.
func (s *served) dial(t testing.TB, path string, hdr http.Header) *gws.Conn {
	t.Helper()
	c, resp, err := gws.DefaultDialer.Dial("ws://"+s.addr+path, hdr)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (status %d)", path, err, status)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// get sends a plain HTTP request with hdr and returns status, headers and
// body.
func (s *served) get(t testing.TB, path string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+s.addr+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// closeOf reads until the connection closes and returns the close code
// and reason the server sent.
func closeOf(t testing.TB, c *gws.Conn) (int, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, _, err := c.ReadMessage()
		if err == nil {
			continue
		}
		if ce, ok := err.(*gws.CloseError); ok {
			return ce.Code, ce.Text
		}
		t.Fatalf("connection ended without a close frame: %v", err)
	}
}

// handshake is a valid handshake's headers, for requests sent by hand.
func handshake() map[string]string {
	return map[string]string{
		"Connection":            "Upgrade",
		"Upgrade":               "websocket",
		"Sec-WebSocket-Version": "13",
		"Sec-WebSocket-Key":     "dGhlIHNhbXBsZSBub25jZQ==",
	}
}
