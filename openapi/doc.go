// Package openapi describes an fx App as an OpenAPI 3.1 document, built
// from the route table the App serves (fx.App.Routes): paths, parameters,
// request bodies and success responses from the route contracts, and, on
// every operation, each error response the route can produce, by status,
// with its possible codes as an enum in the envelope schema of that
// operation and status. Every operation also lists 431
// FX_HEADERS_TOO_LARGE, which the server answers to any request whose
// headers are over fx.Config.HeaderLimit, as one response shared by all
// (components.responses.HeadersTooLarge).
//
// Nothing is annotated twice: schemas come from the validate.Describer of
// each contract (the builder, Struct, QueryStruct, adapters that
// implement it) and from Go types (typed operations, fx.ResponseDoc.Body);
// errors come from the route's contract (422), its body (413), the
// server (431, 500), the middleware that guard it (fx.Declare) and
// Route.Errors; security
// requirements, components.securitySchemes and parameters such as a
// tenant header come from what those middleware declare (fx.Declare).
//
// Mount serves the document and a documentation page (Redoc, embedded in
// the module: no CDN; under its own per-response Content-Security-Policy,
// so it renders behind middleware.SecurityHeaders). Generate returns the document for other uses
// (a file written at build time, a test that diffs it).
package openapi
