// Package fx is a web framework on fasthttp for latency-sensitive services,
// built around one promise: every failure reaches the client as a JSON
// envelope with a stable code and the right status,
//
//	{"error":{"code":"FX_NOT_FOUND","message":"Route GET /nope not found"}}
//
// at a cost close to raw fasthttp.
//
// # A first service
//
// New makes an App; routes take a Handler, which returns an error (or
// panics) when it fails. Expected failures are *Error values with an
// application code; anything else becomes 500 FX_INTERNAL_ERROR, with no
// error text on the wire unless Config.Development is set:
//
//	var ErrUserNotFound = fx.NewError(404, "APP_USER_NOT_FOUND", "User not found")
//
//	app := fx.New()
//	app.Get("/users/:id", func(c *fx.Ctx) error {
//		u, ok := users[c.Param("id")]
//		if !ok {
//			return ErrUserNotFound
//		}
//		return c.JSON(200, u)
//	})
//	// serves until SIGINT or SIGTERM, then drains (RunConfig: the grace period)
//	if err := app.Run(context.Background(), ":8080"); err != nil {
//		log.Fatal(err)
//	}
//
// # Typed operations: the recommended style
//
// Op registers a handler that takes its input as a struct and returns its
// output as a value. The struct's tags are the whole contract: where each
// field comes from (`path:`, `query:`, `header:`, a field named Body for
// the JSON body), its constraints (`validate:"required,min=1"`), and the
// OpenAPI document (package openapi). Every issue of every field is
// reported in one 422 FX_VALIDATION_ERROR; a tag fx cannot honour is a
// configuration error that Boot reports. See the Op example.
//
// # Middleware, errors and the hook
//
// Middleware (Use, Group, Route.Middleware) wraps the rest of the chain
// through next(), which may be called once. A returned error or a panic,
// anywhere, reaches one error boundary that shows the raw value to the
// optional error hook (OnError) and then writes the envelope. The codes
// the framework emits are named by ErrorCodes (ErrorCodes.NotFound, ...),
// with their status in ErrorStatus; package middleware has authentication,
// tenancy, rate limits, CORS, request IDs and the rest of the production
// kit, each declaring the errors it can answer.
//
// # Lifetimes
//
// A *Ctx is pooled: it is valid only until the handler returns. The Ctx
// documentation says which of its results are copies and which alias the
// request's memory.
//
// # Testing and serving
//
// App.Test answers an *http.Request in memory; package fxtest adds
// contract assertions and a strict mode that holds every response to the
// route's document. Listen, Serve and Run serve over TCP (over TLS with
// Config.TLS) with the connection limit, timeouts and graceful shutdown
// of Config; package
// nethttp serves an App from net/http.
//
// # Cost model
//
// Contexts are pooled, the middleware chain of each route is built once
// at Boot, and the next() guard is a counter. The 404 and an *Error kept
// in a variable are answered without allocating (on a static route;
// fasthttp/router allocates for :param values); c.JSON costs at most the
// interface conversion of its argument. The benchmarks in the repository's
// bench/ module compare fx with raw fasthttp and its peers.
//
// The repository's docs/ folder has a page per topic (the error contract,
// routing, validation, tags, middleware, OpenAPI, testing, reliability,
// security, performance), and ARCHITECTURE.md maps the source files.
package fx
