// Command hello is the fx demo server. GET / lists what to try (indented
// JSON): each entry names a route, the status it answers and a ready curl
// line — a success, a 404 with details, a 422 with several issues, a 401,
// a panic, the 404 of a route that does not exist, and the OpenAPI
// document of the routes (/openapi.json) with its page (/docs, open it in
// a browser). Every request is in the access log (JSON on stderr).
//
//	go run ./examples/hello            # listens on 127.0.0.1:8080
//	curl -s localhost:8080/            # the index
//	ADDR=127.0.0.1:0 go run ./examples/hello
//	FX_ENV=production go run ./examples/hello
//
// It runs in development mode unless FX_ENV=production: a 500 then carries
// the panic's text, and the log shows the panic's stack as an array, one
// "function file:line" element per frame. In production the 500 says
// "Internal server error" and the stack is logged as one string.
//
// Ctrl-C (or SIGTERM) shuts it down gracefully: requests in flight are
// answered (for up to 10 s), then it exits; a second Ctrl-C exits at once.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log"
	"log/slog"
	"os"
	"strings"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/openapi"
	"github.com/fxhq/fx/validate"
)

// defaultAddr is where the demo listens, and the host of the index's curl
// lines when a request's Host header cannot be used.
const defaultAddr = "127.0.0.1:8080"

// demoKey is the API key GET /me accepts (a demo: real keys come from a
// secret store, never from the source).
const demoKey = "fx-demo-key-not-a-secret"

func main() {
	app := newApp(fx.Config{
		Development: os.Getenv("FX_ENV") != "production",
		Logger:      slog.New(slog.NewJSONHandler(os.Stderr, nil)),
	})
	// Run logs the address, serves until SIGINT/SIGTERM, and returns once
	// the shutdown is complete.
	if err := app.Run(context.Background(), cmp.Or(os.Getenv("ADDR"), defaultAddr)); err != nil {
		log.Fatal(err)
	}
}

// example is one entry of the index: a request to try and what it shows.
type example struct {
	Route  string `json:"route"` // the route it exercises; "" when no route matches
	Status int    `json:"status"`
	Code   string `json:"code,omitempty"` // the envelope's code, for a failure
	Shows  string `json:"shows"`
	Curl   string `json:"curl"`

	method, path, header, body string // what Curl is built from
}

// examples is the index, in the order a newcomer would try it.
var examples = []example{
	{Route: "GET /hello", Status: 200, Shows: "a JSON success", method: "GET", path: "/hello"},
	{Route: "GET /users/:id", Status: 200, Shows: "a path parameter", method: "GET", path: "/users/7"},
	{Route: "GET /users/:id", Status: 404, Code: "APP_USER_NOT_FOUND", Shows: "an application error with details", method: "GET", path: "/users/missing"},
	{Route: "POST /orders", Status: 422, Code: "FX_VALIDATION_ERROR", Shows: "every issue of body and query in one response", method: "POST", path: "/orders?notify=maybe",
		header: "Content-Type: application/json", body: `{"customer":"","items":[{"sku":"A-1","qty":2},{"qty":0}],"coupon":"x"}`},
	{Route: "POST /orders", Status: 201, Shows: "the same route with a valid order", method: "POST", path: "/orders",
		header: "Content-Type: application/json", body: `{"customer":"Ada","items":[{"sku":"A-1","qty":2}]}`},
	{Route: "GET /me", Status: 401, Code: "FX_UNAUTHENTICATED", Shows: "no API key sent: refused before the handler, with WWW-Authenticate", method: "GET", path: "/me"},
	{Route: "GET /me", Status: 200, Shows: "the caller the API key names", method: "GET", path: "/me", header: "X-API-Key: " + demoKey},
	{Route: "GET /panic", Status: 500, Code: "FX_INTERNAL_ERROR", Shows: "a panic: an envelope for the client, the stack in the log", method: "GET", path: "/panic"},
	{Route: "", Status: 404, Code: "FX_NOT_FOUND", Shows: "no route matches", method: "GET", path: "/nope"},
	{Route: "GET /openapi.json", Status: 200, Shows: "the OpenAPI 3.1 document of these routes, generated from them", method: "GET", path: "/openapi.json"},
	{Route: "GET /docs", Status: 200, Shows: "the document rendered (open it in a browser; its script is served by /docs/redoc.standalone.js)", method: "GET", path: "/docs"},
}

// curl renders e as a curl command against host.
func (e example) curl(host string) string {
	var b strings.Builder
	b.WriteString("curl -i")
	if e.method != "GET" {
		b.WriteString(" -X " + e.method)
	}
	if e.header != "" {
		b.WriteString(" -H '" + e.header + "'")
	}
	if e.body != "" {
		b.WriteString(" -d '" + e.body + "'")
	}
	b.WriteString(" 'http://" + host + e.path + "'")
	return b.String()
}

// curlHost is the request's Host when it is a plain host[:port] (it ends
// up in a shell command a reader copies), the default address otherwise.
func curlHost(c *fx.Ctx) string {
	h := c.Host()
	if h == "" || strings.Trim(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") != "" {
		return defaultAddr
	}
	return h
}

// orderSchema is the contract of POST /orders (see examples/validation
// for more of the builder).
var orderSchema = validate.Object(validate.Fields{
	"customer": validate.String().MinLen(1),
	"items": validate.Array(validate.Object(validate.Fields{
		"sku": validate.String().Pattern(`^[A-Z]-\d+$`, "Must look like A-1"),
		"qty": validate.Integer().Min(1).Max(99),
	})).MinItems(1),
}).Strict()

// errUserNotFound is GET /users/:id's answer for an unknown user, declared
// with a zero userRef so the document types its details.
var errUserNotFound = fx.NewError(404, "APP_USER_NOT_FOUND", "User not found", userRef{})

// userRef is errUserNotFound's details: the id that was asked for.
type userRef struct {
	ID string `json:"id"`
}

// newApp builds the demo app (shared with main_test.go).
func newApp(cfg fx.Config) *fx.App {
	app := fx.New(cfg)
	app.OnResponse(middleware.AccessLog(middleware.AccessLogConfig{})) // one line per request, 404s and 500s included
	app.Use(middleware.RequestID(middleware.RequestIDConfig{}))        // X-Request-ID, and request_id in every log line

	app.Get("/", func(c *fx.Ctx) error {
		host := curlHost(c)
		list := make([]example, len(examples))
		for i, e := range examples {
			e.Curl = e.curl(host)
			list[i] = e
		}
		// Indented for a reader; c.JSON writes compact JSON.
		b, err := json.MarshalIndent(map[string]any{"name": "fx demo", "try": list}, "", "  ")
		if err != nil {
			return err
		}
		return c.Send(200, "application/json", append(b, '\n'))
	})
	app.Get("/hello", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"message": "Hello, fx!"})
	})
	app.Route(fx.Route{
		Method: "GET", Path: "/users/:id",
		Errors: []*fx.Error{errUserNotFound}, // in the document, as this route's 404
		Handler: func(c *fx.Ctx) error {
			id := c.Param("id")
			if id == "missing" {
				return errUserNotFound.With(userRef{ID: id}) // the declared error, with this request's details
			}
			return c.JSON(200, map[string]string{"id": id, "name": "Ada"})
		},
	})
	app.Route(fx.Route{
		Method: "POST", Path: "/orders",
		Body:      orderSchema,
		Query:     validate.Query(validate.Fields{"notify": validate.Boolean().Default(false)}),
		Responses: []fx.ResponseDoc{{Status: 201}},
		Handler: func(c *fx.Ctx) error {
			order, _ := fx.ValidBody[map[string]any](c)
			return c.JSON(201, order)
		},
	})
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{demoKey: {Subject: "demo"}})
	if err != nil {
		panic(err) // a constant key: cannot fail
	}
	app.Route(fx.Route{
		Method: "GET", Path: "/me",
		Middleware: []fx.Middleware{middleware.Auth(middleware.AuthConfig{APIKeys: keys})},
		Handler: func(c *fx.Ctx) error {
			p, _ := middleware.PrincipalFrom(c)
			return c.JSON(200, map[string]string{"subject": p.Subject})
		},
	})
	app.Route(fx.Route{
		Method: "GET", Path: "/panic",
		// A crash to look at, not an operation of the API: it is left out
		// of the document (it has no success to document).
		Doc: fx.RouteDoc{Hidden: true},
		Handler: func(c *fx.Ctx) error {
			panic(errors.New("something broke"))
		},
	})
	// GET /openapi.json: the document of the routes above; GET /docs: a
	// page rendering it (no CDN: its script is embedded).
	openapi.Mount(app, openapi.Config{Title: "fx demo", Version: "1.0.0", YAMLPath: "-", License: &openapi.License{Name: "MIT", Identifier: "MIT"}})
	return app
}
