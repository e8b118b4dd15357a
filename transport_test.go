package fx_test

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
)

// rawExchange writes the chunks to a fresh connection (pausing between them
// when pause > 0) and reads one response.
func rawExchange(t *testing.T, addr string, pause time.Duration, chunks ...string) result {
	t.Helper()
	conn := dialBounded(t, addr, 10*time.Second) // a bound, not an assertion
	defer conn.Close()
	go func() {
		for _, c := range chunks {
			if _, err := io.WriteString(conn, c); err != nil {
				return // the server may close early; the response says why
			}
			if pause > 0 {
				time.Sleep(pause)
			}
		}
	}()
	r, err := readResult(bufio.NewReader(conn), "GET")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Transport errors carry the envelope with catalog codes, and
// never echo request bytes.
func TestTransportErrors(t *testing.T) {
	t.Parallel()
	app := quiet(fx.Config{BodyLimit: 1024, HeaderLimit: 2048, ReadTimeout: 300 * time.Millisecond})
	app.Post("/", func(c *fx.Ctx) error { return c.String(200, "ok") })
	addr := fxtest.Serve(t, app)

	t.Run("ok", func(t *testing.T) {
		r := rawExchange(t, addr, 0, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
		if r.status != 200 || string(r.body) != "ok" {
			t.Fatalf("%d %q", r.status, r.body)
		}
		if r.header.Get("Server") != "" {
			t.Errorf("Server header %q sent by default", r.header.Get("Server"))
		}
	})
	drip := func(head, piece string) []string { // head, then piece 40 times, one write each
		chunks := []string{head}
		for range 40 {
			chunks = append(chunks, piece)
		}
		return chunks
	}
	body := strings.Repeat("<secret-body>", 200)
	for _, tc := range []struct {
		name   string
		delay  time.Duration // between the writes of chunks
		chunks []string
		status int
		code   string
		echo   string // request bytes the response must not contain ("" none)
	}{
		{"body too large", 0, []string{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body},
			413, fx.ErrorCodes.PayloadTooLarge, "secret-body"},
		{"headers too large", 0, []string{"POST / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("<hdr>", 1000) + "\r\n\r\n"},
			431, fx.ErrorCodes.HeadersTooLarge, "<hdr>"},
		{"malformed request line", 0, []string{"GET /<script>\x01 HTTP/1.1 junk\r\nHost: x\r\n\r\n"},
			400, fx.ErrorCodes.BadRequest, "script"},
		{"malformed header", 0, []string{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: <evil>\r\n\r\n"},
			400, fx.ErrorCodes.BadRequest, "evil"},
		{"read timeout (trickled headers)", 50 * time.Millisecond, drip("POST / HTTP/1.1\r\nHost: x\r\n", "X-Slow: <drip>\r\n"),
			408, fx.ErrorCodes.RequestTimeout, "drip"},
		{"read timeout (trickled body)", 50 * time.Millisecond, drip("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", "b"),
			408, fx.ErrorCodes.RequestTimeout, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rawExchange(t, addr, tc.delay, tc.chunks...)
			mustEnvelope(t, r, tc.status, tc.code)
			if tc.echo != "" {
				noEcho(t, r, tc.echo)
			}
		})
	}
}

func noEcho(t *testing.T, r result, s string) {
	t.Helper()
	if strings.Contains(string(r.body), s) {
		t.Errorf("response echoes request bytes %q: %q", s, r.body)
	}
	for k, vs := range r.header {
		for _, v := range vs {
			if strings.Contains(v, s) {
				t.Errorf("header %s echoes request bytes: %q", k, v)
			}
		}
	}
}

func TestServerHeaderOnRequest(t *testing.T) {
	app := quiet(fx.Config{ServerHeader: "fx-test"})
	app.Get("/", func(c *fx.Ctx) error { return c.String(200, "ok") })
	r := do(t, app, "GET", "/", "")
	if r.header.Get("Server") != "fx-test" {
		t.Errorf("Server = %q", r.header.Get("Server"))
	}
	if quietServer := do(t, quiet(), "GET", "/", ""); quietServer.header.Get("Server") != "" {
		t.Errorf("default Server header %q", quietServer.header.Get("Server"))
	}
}

// Config defaults are safe: a read timeout and limits are set.
func TestConfigDefaults(t *testing.T) {
	c := fx.New().Config()
	if c.ReadTimeout <= 0 || c.WriteTimeout <= 0 || c.IdleTimeout <= 0 {
		t.Errorf("timeouts %v %v %v", c.ReadTimeout, c.WriteTimeout, c.IdleTimeout)
	}
	if c.BodyLimit != fx.DefaultBodyLimit || c.HeaderLimit != fx.DefaultHeaderLimit || c.Logger == nil {
		t.Errorf("defaults %+v", c)
	}
	if c.Development {
		t.Error("Development on by default")
	}
	// Negative disables.
	if c := fx.New(fx.Config{ReadTimeout: -1}).Config(); c.ReadTimeout != 0 {
		t.Errorf("negative ReadTimeout gave %v", c.ReadTimeout)
	}
}
