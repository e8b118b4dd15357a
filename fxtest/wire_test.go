package fxtest_test

import (
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
)

// Regression: with "Expect: 100-continue" fasthttp writes an interim
// "HTTP/1.1 100 Continue" head before the response. Do kept the first head
// it found, the interim one, so Response.Header returned no headers at all
// (no Content-Type, no Content-Length) for a 200 that had them. Do now
// skips interim heads, as a client does.
func TestDoSkipsInterimResponses(t *testing.T) {
	app := quietApp()
	app.Post("/echo", func(c *fx.Ctx) error {
		c.RequestCtx().Response.Header.Set("X-Final", "yes")
		return c.JSON(201, map[string]string{"got": string(c.Body())})
	})
	r := fxtest.New(t, app).Post("/echo").Header("Expect", "100-continue").JSON(`"a"`).Do()
	r.AssertJSON(201, map[string]string{"got": `"a"`}).AssertHeader("X-Final", "yes")
	if r.Header().Get("Content-Type") == "" {
		t.Errorf("headers of the final response: %v", r.Header())
	}
}

// Responses without a body: 204 and 304 carry none, whatever their headers
// say; Body is empty and not nil.
func TestDoBodylessStatuses(t *testing.T) {
	app := quietApp()
	app.Get("/204", func(c *fx.Ctx) error { return c.NoContent(204) })
	app.Get("/304", func(c *fx.Ctx) error { return c.NoContent(304) })
	c := fxtest.New(t, app)
	for path, status := range map[string]int{"/204": 204, "/304": 304} {
		if r := c.Get(path).Do(); r.Body == nil || len(r.Body) != 0 || r.Status != status {
			t.Errorf("%s: %d %q", path, r.Status, r.Body)
		}
	}
}
