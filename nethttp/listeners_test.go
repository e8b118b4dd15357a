package nethttp_test

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/nethttp"
)

// bothListeners serves app on fasthttp's listener (App.Serve on a loopback
// port) and on net/http's (an httptest.Server over Handler), and returns
// the base URL of each by listener name. Both are shut down with the test.
func bothListeners(t *testing.T, app *fx.App) map[string]string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Serve(ln) }()
	std := httptest.NewServer(nethttp.Handler(app))
	t.Cleanup(func() {
		std.Close()
		if err := app.Shutdown(); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return map[string]string{"fasthttp": "http://" + ln.Addr().String(), "nethttp": std.URL}
}

// envelopeCode returns the code of an error envelope body, or "".
func envelopeCode(body string) string {
	var env struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal([]byte(body), &env)
	return env.Error.Code
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
