// Package clients holds the Go clients ogen and oapi-codegen generate from
// the documents the examples serve (examples/orders, examples/openapi and
// examples/hello), and the tests that run them against the live example
// servers. It is a module of its own so that the generators and their
// runtimes (pinned in go.mod, run with `go tool`) stay out of fx's
// dependencies.
//
// Layout:
//
//	testdata/NAME.json      the document examples/NAME serves, in golden
//	                        form (cmd/golden: keys sorted, indented)
//	gen/ogen/NAME/          ogen's client for it (ogen.yml: the client alone)
//	gen/oapi/NAME/          oapi-codegen's (types and client)
//	cmd/orders-client/      the ogen client of examples/orders under
//	                        fx/client (docs/clients.md shows it whole)
//
// check.sh writes all of it from the served documents. Only testdata/
// (and each gen package's doc.go) is committed: in CI a served document
// that differs from its golden file fails, and the clients are generated
// anew at every run. The tests and cmd/orders-client need the generated
// clients, so they carry the `clients` build tag that check.sh sets
// (go test -tags clients in this folder, after check.sh). The tests
// start each example on 127.0.0.1 as its TestServeForClients serves it
// (the App main builds, where a request can be held in the orders
// handler, the user store marked unreachable, and any request made to
// answer the 500 every operation declares: fxtest.FaultHeader), check
// that it serves the document its clients were generated from, and call
// every operation through both generated clients until every declared
// response (status and, for an error, each code) has been answered and
// decoded into the client's typed value for it, the typed error equal to
// the one sent (code, message, details); see docs/openapi.md
// ("Clients").
package clients
