// Package clients holds the Go clients ogen and oapi-codegen generate from
// the documents the examples serve (examples/orders, examples/openapi and
// examples/hello), and the tests that run them against the live example
// servers. It is a module of its own so that the generators and their
// runtimes (pinned in go.mod, run with `go tool`) stay out of fx's
// dependencies.
//
// Layout:
//
//	testdata/NAME.json      the document examples/NAME serves, as served
//	gen/ogen/NAME/          ogen's client for it (ogen.yml: the client alone)
//	gen/oapi/NAME/          oapi-codegen's (types and client)
//	cmd/orders-client/      the ogen client of examples/orders under
//	                        fx/client (docs/clients.md shows it whole)
//
// check.sh regenerates all of it from the served documents; in CI the
// result must equal what is committed. The tests (go test in this folder)
// build each example, start it on 127.0.0.1 (examples/orders and
// examples/openapi as their TestServeForClients serves them, where a
// request can be held in the orders handler and the user store marked
// unreachable), check that it serves the document its clients were
// generated from, and call every operation
// through both generated clients until every declared response (status
// and, for an error, each code) has been answered and decoded into the
// client's typed value for it; see docs/openapi.md ("Clients").
package clients
