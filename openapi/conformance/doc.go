// Package conformance checks, with an independent OpenAPI implementation
// (pb33f/libopenapi and libopenapi-validator), that the documents package
// openapi writes are valid OpenAPI 3.1, and that what an fx App really
// answers — successes and every error envelope — validates against them.
// It is its own module so that the root module does not depend on those
// libraries: run it with `cd openapi/conformance && go test ./...`.
package conformance
