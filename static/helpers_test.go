package static_test

import (
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
)

// silentLogger keeps the tests' and examples' output to the responses.
var silentLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// quiet returns an App that logs nothing.
func quiet() *fx.App { return fx.New(fx.Config{Logger: silentLogger}) }

// result is a response read back by do.
type result struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request to app through fxtest (which boots app and shuts
// it down when the test ends), with the headers hdr (name, value, ...).
func do(t testing.TB, app *fx.App, method, target, body string, hdr ...string) result {
	t.Helper()
	req := fxtest.New(t, app).Request(method, target)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header(hdr[i], hdr[i+1])
	}
	if body != "" {
		req.Body("text/plain", []byte(body))
	}
	r := req.Do()
	return result{status: r.Status, header: r.Header(), body: r.Body}
}

// mustEnvelope checks that r is the error envelope of status and code,
// served as application/json, and returns it.
func mustEnvelope(t testing.TB, r result, status int, code string) fxtest.Envelope {
	t.Helper()
	if r.status != status {
		t.Errorf("status = %d, want %d (body %q)", r.status, status, r.body)
	}
	return kittest.CheckEnvelope(t, r.status, r.header, r.body, code)
}
