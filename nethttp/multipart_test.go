package nethttp_test

import (
	"bytes"
	"mime/multipart"
	"strconv"
	"testing"

	"github.com/fxhq/fx"
)

// formOf builds a multipart form of n fields and returns its Content-Type
// and body.
func formOf(t *testing.T, n int) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for i := range n {
		if err := w.WriteField("f"+strconv.Itoa(i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), buf.Bytes()
}

// formApp serves POST /ignore, which never reads its form, and POST /read,
// which answers the number of fields of its form (or the refusal).
func formApp(maxParts int) *fx.App {
	app := quietApp(fx.Config{MultipartMaxParts: maxParts})
	app.Post("/ignore", func(c *fx.Ctx) error { return c.String(200, "ran") })
	app.Post("/read", func(c *fx.Ctx) error {
		f, err := c.MultipartForm()
		if err != nil {
			return err
		}
		return c.String(200, strconv.Itoa(len(f.Value)))
	})
	return app
}

// TestMultipartPartLimitOnBothListeners: a form is parsed only when a
// handler reads it, and Config.MultipartMaxParts is then the only limit
// on its parts, the same on fasthttp's listener and on net/http's.
// mime/multipart's own cap of 1000 parts no longer decides: a route that
// never reads its form runs whatever the form holds, and MultipartMaxParts
// 5000 admits 2,000 parts.
func TestMultipartPartLimitOnBothListeners(t *testing.T) {
	for _, tc := range []struct {
		maxParts, parts int
		route           string
		status          int
		want            string // the body on 200, the envelope's code otherwise
	}{
		{0, 1001, "/ignore", 200, "ran"},
		{0, 1001, "/read", 413, fx.ErrorCodes.PayloadTooLarge},
		{0, 1000, "/read", 200, "1000"},
		{5000, 2000, "/read", 200, "2000"},
		{5000, 2000, "/ignore", 200, "ran"},
		{5000, 5001, "/read", 413, fx.ErrorCodes.PayloadTooLarge},
		{1500, 1500, "/read", 200, "1500"},
		{1500, 1501, "/read", 413, fx.ErrorCodes.PayloadTooLarge},
	} {
		ct, body := formOf(t, tc.parts)
		for listener, base := range bothListeners(t, formApp(tc.maxParts)) {
			status, got := send(t, base+tc.route, ct, body)
			if tc.status != 200 {
				got = envelopeCode(got)
			}
			if status != tc.status || got != tc.want {
				t.Errorf("%s, MultipartMaxParts %d, %d parts to %s: %d %q, want %d %q",
					listener, tc.maxParts, tc.parts, tc.route, status, got, tc.status, tc.want)
			}
		}
	}
}
