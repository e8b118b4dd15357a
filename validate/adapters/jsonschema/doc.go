// Package jsonschema adapts santhosh-tekuri/jsonschema/v6 (JSON Schema
// drafts 4 to 2020-12) to fx's validate.Schema, so that a JSON Schema
// document can be a route contract's Body or Query:
//
//	orders, err := jsonschema.Compile(`{
//		"type": "object",
//		"required": ["name"],
//		"properties": {"name": {"type": "string", "minLength": 1}},
//		"additionalProperties": false
//	}`)
//	app.Route(fx.Route{Method: "POST", Path: "/orders", Body: orders, Handler: h})
//
// Compile takes one document as JSON text and asserts "format" (an
// invalid email fails); MustCompile panics instead, for package-level
// variables; New wraps a schema compiled with the library's own Compiler
// ($ref to other resources, custom formats and vocabularies). A Schema is
// immutable once compiled and safe to share between routes and
// goroutines. Its Result.Value is the validated value itself, so the
// handler reads a map[string]any (fx.ValidBody[map[string]any]).
//
// Every failing keyword becomes one issue at the path of the value it is
// about: a missing required property, and each additional property, at the
// child path (["items","0","sku"]), not at the object. Messages are plain
// English ("Expected a string, got a number", "Required", "Unknown key").
//
// Query values are strings (or []string, validated as an array of
// strings): a schema for a query string should say "type": "string" with a
// pattern, as JSON Schema does not coerce.
//
// # Cost
//
// Compiling is done once, at startup; validating a request walks the
// compiled schema over the decoded tree fx hands it, without re-parsing
// the schema, and copies a query map only when it has a repeated key. The
// library has no way to stop early: on a failing value it checks the
// whole value and builds one error per failing keyword before the adapter
// sees any. ValidateLimit (validate.Limited) then translates at most the
// requested number, so the wire stays bounded, but the library's own work
// is bounded only by the body size limit (BenchmarkHugeInvalidBody in this
// module measures it).
//
// # Lifetime
//
// The adapter keeps nothing of the value it validates; the Result's Value
// is the caller's value, unchanged.
//
// # Errors
//
// Issues become fx's 422 FX_VALIDATION_ERROR (details.issues, at location
// "body" or "query"). An error of the library that is not a validation
// failure (a schema that cannot be evaluated) is returned through
// validate.Fail: fx answers 500 FX_INTERNAL_ERROR and logs it.
//
// It is a module of its own, so that importing fx never pulls in the
// JSON Schema library.
package jsonschema
