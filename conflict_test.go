package fx_test

import (
	"strings"
	"testing"

	"github.com/fxhq/fx"
)

// TestRouteConflictsReportedOnce: each conflicting registration is one boot
// error, in fx's ":name" / "*name" syntax (never the router's "{name}"),
// and a GET's automatic HEAD does not repeat it.
func TestRouteConflictsReportedOnce(t *testing.T) {
	h := func(c *fx.Ctx) error { return nil }
	app := quiet()
	app.Get("/users/:id", h)
	app.Get("/users/:name", h) // same shape, other name
	app.Get("/dup", h)
	app.Get("/dup", h) // the same method and path twice
	app.Get("/files/*a", h)
	app.Get("/files/*b", h)
	app.Head("/h/:x", h)
	app.Head("/h/:y", h)
	app.Get("/h/:z", h)         // its HEAD twin defers to the explicit HEAD: no conflict
	app.Post("/users/:name", h) // another method: no conflict
	g := app.Group("/g")
	g.Put("/:id", h)
	g.Put("/:key", h)
	var got []string
	for _, fe := range bootErrors(t, app) {
		if fe.Code != fx.ErrorCodes.InternalError {
			t.Errorf("%v is not an FX_INTERNAL_ERROR", fe)
		}
		got = append(got, fe.Error())
	}
	want := []string{
		"Route GET /users/:name: conflicts with GET /users/:id",
		"Route GET /dup: registered twice",
		"Route GET /files/*b: conflicts with GET /files/*a",
		"Route HEAD /h/:y: conflicts with HEAD /h/:x",
		"Route PUT /g/:key: conflicts with PUT /g/:id",
	}
	if len(got) != len(want) {
		t.Fatalf("%d errors, want %d (one per conflict):\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("error %d = %q, want it to say %q", i, got[i], w)
		}
		if strings.ContainsAny(got[i], "{}") {
			t.Errorf("error %d = %q uses the router's syntax", i, got[i])
		}
	}
}
