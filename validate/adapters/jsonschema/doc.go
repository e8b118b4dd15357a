// Package jsonschema adapts santhosh-tekuri/jsonschema/v6 (JSON Schema
// drafts 4 to 2020-12) to fx's validate.Schema:
//
//	orders, err := jsonschema.Compile(`{
//		"type": "object",
//		"required": ["name"],
//		"properties": {"name": {"type": "string", "minLength": 1}},
//		"additionalProperties": false
//	}`)
//	app.Route(fx.Route{Method: "POST", Path: "/orders", Body: orders, Handler: h})
//
// Every failing keyword becomes one issue at the path of the value it is
// about: a missing required property, and each additional property, at the
// child path (["items","0","sku"]), not at the object. Messages are plain
// English ("Expected a string, got a number", "Required", "Unknown key").
//
// Query values are strings (or []string): a schema for a query string
// should say "type": "string" with a pattern, as JSON Schema does not
// coerce.
//
// It is a module of its own, so that importing fx never pulls in the
// JSON Schema library.
package jsonschema
