// Package fxtest tests fx applications: a client that sends requests to an
// App in memory, assertions that know fx's error contract, and helpers
// that mint credentials for the middleware package.
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
// Measured on a shared 2-core machine, CPU time per request for a route
// answering a small JSON object (`go test -run '^$' -bench . -benchmem
// ./fxtest`; wall times on a loaded machine vary more than these ratios):
//
//   - BenchmarkDirectHandler, app.Handler() with a reused RequestCtx (the
//     floor, no HTTP bytes at all): about 1.1 µs, 4 allocations.
//   - BenchmarkTestRaw, the exchange through the server: about 2.2 µs
//     (2×), 5 allocations; fasthttp's per-connection setup and its parsing
//     and writing of the request and response are the difference.
//   - BenchmarkClient, Do with its response read back: about 3.4 µs (3×),
//     8 allocations. Response.Header parses the headers on first use.
//   - BenchmarkAppTest, app.Test with net/http types: about 23 µs, 46
//     allocations (a goroutine, and net/http's writer and reader).
//   - Teardown: New registers app.Shutdown with t.Cleanup. Nothing is left
//     serving between requests, so Shutdown returns in microseconds (it
//     used to take ~100 ms per App: fasthttp's shutdown polls its
//     connection count every 100 ms).
//   - Signer: an HS256 token a few microseconds, RS256 about a millisecond;
//     generating an RSA key about 0.1 s (share RS*/PS* Signers).
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
// # Credentials
//
// Signer mints JWTs (HS*, RS*, PS*, ES*, EdDSA) with roles, permissions and
// tenant claims, and builds the middleware.JWTVerifier that accepts them;
// Unsigned and Tamper build the forgeries a verifier must refuse. APIKeys
// mints API keys for principals and builds middleware.APIKeys.
package fxtest
