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
//	live/                   the tests that run both clients against the
//	                        live examples
//	cmd/orders-client/      the ogen client of examples/orders under
//	                        fx/client (docs/clients.md shows it whole)
//
// check.sh writes gen/ (each package's doc.go included) from the served
// documents, and rewrites testdata/ outside CI. Only testdata/ is
// committed: in CI a served document that differs from its golden file
// fails, and the clients are generated anew at every run. live/ and
// cmd/orders-client need the generated clients, so go.mod's ignore block
// leaves them and gen/ out of ./..., all and go mod tidy (every go
// command works on a fresh clone), they carry the `clients` build tag
// that check.sh sets, and check.sh names them to vet and test them (go
// test -tags clients ./live in this folder, after check.sh). The tests
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
