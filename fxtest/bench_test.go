package fxtest_test

import (
	"net/http/httptest"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/valyala/fasthttp"
)

// The same request four ways, so their costs compare:
//
//	go test -run '^$' -bench . -benchmem ./fxtest
//
// BenchmarkDirectHandler is the floor: app.Handler() called with a reused
// fasthttp.RequestCtx, no HTTP bytes at all. BenchmarkClient is a request
// through fxtest (the App's fasthttp server, in memory) with its response
// read back (BenchmarkClientStrict in strict mode); BenchmarkTestRaw the exchange alone; BenchmarkAppTest the
// net/http-typed app.Test.

func benchApp() *fx.App {
	app := quietApp()
	app.Get("/users/:id", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"id": c.Param("id"), "name": "Ada"})
	})
	return app
}

// serveDirect serves GET /users/1 through h on rc, the request set up
// afresh as a server parses one: the floor Do is compared with.
func serveDirect(h fasthttp.RequestHandler, rc *fasthttp.RequestCtx) {
	rc.Request.Reset()
	rc.Response.Reset()
	rc.Request.Header.SetMethod("GET")
	rc.Request.SetRequestURI("/users/1")
	rc.Request.Header.SetHost("example.com")
	h(rc)
}

func BenchmarkDirectHandler(b *testing.B) {
	h := benchApp().Handler()
	var rc fasthttp.RequestCtx
	b.ReportAllocs()
	for b.Loop() {
		serveDirect(h, &rc)
		if rc.Response.StatusCode() != 200 {
			b.Fatal(rc.Response.StatusCode())
		}
	}
}

func BenchmarkClient(b *testing.B) {
	c := fxtest.New(b, benchApp())
	b.ReportAllocs()
	for b.Loop() {
		if r := c.Get("/users/1").Do(); r.Status != 200 {
			b.Fatal(r.Status)
		}
	}
}

// BenchmarkClientStrict is BenchmarkClient in strict mode, the route
// declaring its body type: the check's cost per request (finding the
// route, type-checking the body).
func BenchmarkClientStrict(b *testing.B) {
	type user struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	app := quietApp()
	app.Route(fx.Route{Method: "GET", Path: "/users/:id", Responses: []fx.ResponseDoc{{Body: user{}}},
		Handler: func(c *fx.Ctx) error { return c.JSON(200, user{ID: c.Param("id"), Name: "Ada"}) }})
	c := fxtest.New(b, app)
	b.ReportAllocs()
	for b.Loop() {
		if r := c.Get("/users/1").Do(); r.Status != 200 {
			b.Fatal(r.Status)
		}
	}
}

func BenchmarkTestRaw(b *testing.B) {
	app := benchApp()
	b.Cleanup(func() { app.Shutdown() })
	req := []byte("GET /users/1 HTTP/1.1\r\nHost: example.com\r\n\r\n")
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if out, err = app.TestRaw(out[:0], req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppTest(b *testing.B) {
	app := benchApp()
	b.Cleanup(func() { app.Shutdown() })
	b.ReportAllocs()
	for b.Loop() {
		resp, err := app.Test(httptest.NewRequest("GET", "/users/1", nil))
		if err != nil || resp.StatusCode != 200 {
			b.Fatal(err)
		}
	}
}
