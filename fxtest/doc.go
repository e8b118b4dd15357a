// Package fxtest tests fx applications: a client that sends requests to an
// App in memory, a loopback server, and assertions that know fx's error
// contract.
//
//	func TestGetUser(t *testing.T) {
//		c := fxtest.New(t, newApp())
//		c.Get("/users/1").Do().AssertJSON(200, User{ID: "1", Name: "Ada"})
//		c.Get("/users/missing").Do().AssertError(404, "APP_USER_NOT_FOUND")
//		c.Post("/orders").JSON(map[string]any{"items": []any{}}).Do().
//			AssertIssues(fxtest.Issue{Location: "body", Path: "items"})
//	}
//
// # One path: the real server, in memory
//
// A request goes through the App's real fasthttp server, as over a
// socket: fasthttp parses the bytes Do writes (header and body limits, the
// framing guard, transport errors answered with the envelope), the App
// handles the request, fasthttp writes the response and Do parses it. No
// port is opened and no goroutine is started: the exchange runs on the
// calling goroutine (fx.App.TestRaw, the mechanism under fx.App.Test as
// well). So what a test sees is what a client would: the status, every
// header fasthttp adds (Date, Content-Length), 413 FX_PAYLOAD_TOO_LARGE
// over Config.BodyLimit.
//
// There is no second, "direct" path that calls the App's handler with a
// hand-built fasthttp.RequestCtx. It would be cheaper, but it would skip
// exactly the transport behaviour above (a body over the limit would reach
// the handler; no Date, Content-Length or Server header; HEAD bodies not
// dropped), so a test could pass against behaviour no client ever sees,
// and fx would have two request paths to keep in step.
//
// # Cost
//
// Measured on a quiet 2-core VM (kvm-clock), per request for a route
// answering a small JSON object (`go test -run '^$' -bench . -benchmem
// -cpu 1 -count 3 ./fxtest`; wall times drift between runs on a VM,
// compare the ratios within one run):
//
//   - BenchmarkDirectHandler, app.Handler() with a reused RequestCtx (the
//     floor, no HTTP bytes at all): about 0.75 µs, 4 allocations.
//   - BenchmarkTestRaw, the exchange through the server: about 1.65 µs
//     (2.2×), 4 allocations, none beyond the handler's (the in-memory
//     connection is recycled). The difference, ~0.8 µs, is fasthttp's
//     per-connection work, the same as on a socket: parsing the request
//     head and URI, writing the response, its idle-connection map, a
//     pooled RequestCtx, reader and writer, one clock read for the
//     connection's start, the framing guard and the keep-alive loop's
//     read of the end of input. (It was 1.9 µs while fasthttp enforced
//     the timeouts: four more clock reads per exchange, ~55 ns each on
//     kvm-clock; fx now enforces them on served connections only, and an
//     in-memory exchange never waits.)
//   - BenchmarkClient, Do with its response read back: about 1.95 µs
//     (2.6×), 6 allocations: the request is written into a pooled
//     buffer, the response copied once into memory the Response owns, and
//     only its status line and framing headers read (headers are parsed by
//     Response.Header on first use, the envelope by the assertions that
//     need it). It was 3.4 µs and 8 allocations with net/textproto-style
//     parsing (fasthttp.Response.Read), a heap-allocated Request and
//     t.Helper on every call. Do's own part is ~0.3 µs.
//
// The goal of 2× a direct call is not met for a handler this
// cheap: fasthttp's per-connection floor alone (~0.8 µs) is more than
// the handler (~0.75 µs), so even a free client would be at 2.1×. Meeting
// it would mean calling the handler without fasthttp's connection
// serving, and then limits, framing and transport errors (what an
// in-memory server is for) would go untested. For a handler doing real
// work (decoding and validating a body, a store call) the ratio falls
// towards 1.
//   - BenchmarkAppTest, app.Test with net/http types: about 23 µs, 46
//     allocations (a goroutine, and net/http's writer and reader).
//   - Teardown: New registers app.Shutdown with t.Cleanup. Nothing is left
//     serving between requests, so Shutdown returns in microseconds (it
//     used to take ~100 ms per App: fasthttp's shutdown polls its
//     connection count every 100 ms).
//
// # Over a real socket
//
// Where the in-memory client is not enough (a real client library, raw
// bytes, timeouts, connection limits), Serve serves the App on a loopback
// port until the test ends. What comes back is checked with the same
// rules: CheckEnvelope (status, headers and body) or CheckEnvelopeBody
// (a body alone) check an error envelope's wire format, and ReadResponses
// reads the raw bytes of a connection with Do's parser. ServeForClients
// serves it to tests run by another process (clients generated from the
// App's document), which drives it through the test's standard streams
// and reaches the declared 500 with a header (FaultHeader).
//
// # Failures
//
// Assertions call t.Helper and t.Errorf, so a test reports every mismatch;
// each message names the request and quotes the response status,
// Content-Type and body. Do and Response.Decode call t.Fatalf: without a
// response, or with a body that does not decode, the rest of the test
// cannot say anything useful. Use the Client from the test's goroutine
// (or see testing.T's rules for Fatalf).
//
// # Strict mode: the server never answers outside its document
//
// Every response a test receives is held to the contract of the route
// that answered it: the list package openapi documents for the operation
// (fx.RouteInfo.DeclaredResponses, one computation for both, so a test
// and the document cannot disagree):
//
//   - the status must be declared;
//   - an error status's body must be an error envelope whose code is
//     declared at that status;
//   - a success body declared with a Go type (Response.Body, a typed
//     operation's Out) must fit that type as validate.Struct reads it
//     (every type mismatch listed); a Response.Body
//     that is a validate.Schema validates the decoded body. A success
//     declared without a body, or with a content type other than JSON, is
//     checked by its status only;
//   - an error's details must fit the declared details of its code when
//     they are a validate.Schema (middleware.FailureReasons: details.reason
//     is one of the reasons the route's middleware send);
//   - a header the contract declares on some response of the route (a
//     Response's Headers, its middleware's Declaration.Headers) is sent
//     only on the responses it is declared on, and always where it is
//     declared required.
//
// A response outside the contract fails the test (t.Errorf, the test
// goes on) with a message such as
//
//	POST /orders answered 409 APP_CONFLICT, which its contract does not declare (declared: 201, 401 FX_UNAUTHENTICATED, 413 FX_PAYLOAD_TOO_LARGE, 422 FX_VALIDATION_ERROR, 431 FX_HEADERS_TOO_LARGE, 500 FX_INTERNAL_ERROR)
//
// followed by the response, as the assertions quote it ("the contract of
// POST /orders" when the request target is not the pattern itself).
//
// Strict mode is on by default when the App has a document, that is when
// at least one of its routes says something about itself: a RouteDoc
// (any field, so a Group's Doc or Tags count, and so do the hidden routes
// of openapi.Mount), Route.Errors of its own, Route.Responses, or a typed
// operation (fx.Op). Errors that only middleware declare (fx.Declare), or
// a handler on its own (websocket.New's refusals), do not count:
// first-party middleware and handlers always declare, and using them is
// not writing a document. Once on, every route of the App is checked,
// documented or not: a route that declares nothing is held to what the
// document says of it (200, 431, 500, 413 when it reads a body, and what its
// middleware declare). New(t, app, Lenient()) turns the mode off (for a
// test probing behaviour the contract does not describe on purpose);
// Strict() turns it on for an App without a document.
//
// What is not checked, because it is no route's answer: a request that no
// route matches (404 FX_NOT_FOUND, a trailing-slash redirect, the
// automatic OPTIONS answer, whatever app middleware answers there),
// routes hidden from the document (RouteDoc.Hidden), and the refusals the
// transport answers before routing (400 FX_BAD_REQUEST, 408
// FX_REQUEST_TIMEOUT, 413 FX_PAYLOAD_TOO_LARGE, 431
// FX_HEADERS_TOO_LARGE) unless the route declares them; a route whose own
// code answers one of these four without declaring it is therefore not
// caught. A HEAD request is held to its route (the GET's when no HEAD
// route is registered) by its status only. The route is found as fx's
// router finds it, from the registered patterns: a static segment
// outranks a parameter, a parameter a catch-all, from the left; the path
// is matched percent-decoded.
//
// Cost: test-time only. Nothing is added to the App (no middleware, no
// observer): the server's path is the same with strict mode on or off.
// New reads the route table once (App.Routes) and builds a decoder per
// declared body type; Do then finds the route (a walk of the App's
// patterns for the method), decodes the envelope of an error body,
// parses the response headers when the route declares some, and scans a
// typed success body once more: BenchmarkClientStrict (a route
// declaring its body type) makes 2 allocations more than BenchmarkClient
// and, on a 2-core VM shared with other jobs, took about 11 µs against 9
// µs (best of 5, -cpu 1; the machine was too loaded for finer figures). A
// client in lenient mode pays one nil check per request.
//
// # Coverage
//
// A strict client counts which declared responses (route × status × code)
// its responses exercised: Client.Coverage reports the client's,
// TotalCoverage every strict client's in the test binary (print it from
// TestMain), and New(t, app, RequireFullCoverage()) fails the test at its
// end when one was missed. The responses fx adds to every route of a kind
// (500 FX_INTERNAL_ERROR, 431 FX_HEADERS_TOO_LARGE, 413
// FX_PAYLOAD_TOO_LARGE) are left out: a suite is not expected to provoke
// them on every route.
//
// # Credentials
//
// fxtest mints none and links neither the middleware package nor a JWT
// library. An API key verifier for a test is middleware.NewAPIKeys given
// the keys the test chooses; JWTs come from package middleware/jwt/jwttest
// (a Signer with roles, permissions and tenant claims, and the forgeries
// a verifier must refuse).
package fxtest
