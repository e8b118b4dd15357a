// Package openapi is oapi-codegen's client of the document examples/openapi serves
// (testdata/openapi.json). check.sh generates it beside this file; git keeps
// only this file, so that the package exists for the tools that read the
// module before generation (go mod tidy, go vet without the clients tag).
package openapi
