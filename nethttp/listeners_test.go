package nethttp_test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/nethttp"
)

// bothListeners serves app on fasthttp's listener (App.Serve on a loopback
// port) and on net/http's (an httptest.Server over Handler), and returns
// the base URL of each by listener name. Both are shut down with the test.
func bothListeners(t *testing.T, app *fx.App) map[string]string {
	t.Helper()
	addr := fxtest.Serve(t, app)
	std := httptest.NewServer(nethttp.Handler(app))
	t.Cleanup(std.Close)
	return map[string]string{"fasthttp": "http://" + addr, "nethttp": std.URL}
}

// envelopeCode returns the code of an error envelope body, or "" when
// the body is not exactly one (fxtest.CheckEnvelopeBody).
func envelopeCode(body string) string {
	env, _ := fxtest.CheckEnvelopeBody([]byte(body))
	return env.Code
}

// send posts body with contentType to url and returns the status and body.
func send(t *testing.T, url, contentType string, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post(url, contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, readAll(t, resp)
}

// TestHeaderNameNotATokenOnNetHTTP: on the net/http listener a field name
// that is not a token ("X A: a") is refused by net/http itself, with 400
// and a closed connection, before fx sees the request (so the reply is
// net/http's plain text, not an envelope); the fasthttp listener's own
// refusal is pinned by the root package's TestFramingFieldNameBytes.
func TestHeaderNameNotATokenOnNetHTTP(t *testing.T) {
	app := quietApp()
	ran := false
	app.Get("/next", func(c *fx.Ctx) error { ran = true; return c.String(200, "next") })
	srv := httptest.NewServer(nethttp.Handler(app))
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second)) // a bound, not an assertion
	_, _ = io.WriteString(conn, "GET /next HTTP/1.1\r\nHost: a\r\nX A: a\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 || !resp.Close || ran {
		t.Fatalf("%d (close %v), handler ran %v: want net/http's 400 and a closed connection", resp.StatusCode, resp.Close, ran)
	}
}
