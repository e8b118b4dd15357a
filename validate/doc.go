// Package validate is Standard Schema v1 in Go: one small interface that
// any validation library can implement, so that fx reports the issues of
// every library in the same shape.
//
// A route contract names a Schema for the request body and one for the
// query string (fx.Route.Body, fx.Route.Query). fx validates both before
// the handler runs, answers every issue of both in one 422, and hands the
// handler the validated values (fx.ValidBody, fx.ValidQuery). This package
// holds the interface, a schema builder, schemas derived from Go struct
// types, and the strict JSON reader fx uses for request bodies.
//
// # The interface
//
// A Schema has one method, Validate, which returns a Result: the validated
// (possibly transformed) Value when Issues is empty, otherwise every Issue
// found, never only the first, each with the Path of the value it is about
// and a plain-English Message ("Must be at least 1", never a Go type).
//
// What Validate receives from fx: for a route's Body, the request body
// decoded as JSON into any (objects map[string]any, arrays []any, numbers
// float64, and nil for an empty body); for a route's Query, a
// map[string]any whose values are string, or []string for a repeated key.
//
// Four optional interfaces make a schema cheaper to run, with the same
// Result on the wire: Decoder receives the raw body bytes instead of the
// decoded tree (ValidateJSON), a GrammarChecker is a Decoder that checks
// the body's grammar in its own pass (fx then does not check it first),
// and Limited and LimitedDecoder stop after a given number of issues
// (ValidateLimit, ValidateJSONLimit). A schema that
// cannot validate at all (a broken schema, a failed dependency) returns
// Fail(err) rather than issues.
//
// # The builder
//
// String, Number, Integer, Boolean, Array and Object build a schema for
// each JSON kind; Query builds the object schema of a query string, whose
// fields coerce the query's strings ("5" to 5, "true" to true):
//
//	order := validate.Object(validate.Fields{
//		"name": validate.String().MinLen(1),
//		"qty":  validate.Integer().Min(1).Default(1),
//		"tags": validate.Array(validate.String().Enum("gift", "urgent")).Optional(),
//	}).Strict()
//
//	list := validate.Query(validate.Fields{
//		"limit": validate.Integer().Min(1).Max(100).Default(20),
//	})
//
// Every builder method returns a new schema: schemas are immutable values,
// safe to share between routes and goroutines. An Object's output is a new
// map[string]any holding its declared fields (defaults filled in). Check
// adds a custom rule to a string, number, array or object schema; an
// Object check may report at one field with a *FieldError. Any Schema,
// from any library, can be a field.
//
// # Struct schemas
//
// Struct[T] derives a schema from the JSON tags of a Go type and decodes a
// valid body into a *T; QueryStruct[T] does the same for a query string:
//
//	app.Route(fx.Route{Method: "POST", Path: "/orders",
//		Body: validate.Struct[Order](),
//		Handler: func(c *fx.Ctx) error {
//			o, _ := fx.ValidBody[Order](c) // decoded once
//			return c.JSON(201, o)
//		},
//	})
//
// It checks the type of every value (every mismatch, with its path) and
// the constraint tags of every field: go-playground/validator's
// `validate:"..."` vocabulary (required, omitempty, min, max, len, eq, ne,
// gt, gte, lt, lte, oneof, email, url, uri, uuid, datetime, alpha,
// alphanum, numeric, hexadecimal, lowercase, uppercase, ip, ipv4, ipv6,
// cidr, hostname, startswith, endswith, contains, excludes, unique, dive,
// keys/endkeys), plus `pattern:"regexp"`, `doc:"..."` and `example:"..."`
// (docs/tags.md). Type and rule issues come together in one list. A tag
// that cannot be honoured panics in Struct (CompileStruct returns it as a
// *TagError). For the rest of validator's vocabulary use the playground
// adapter (validate/adapters/playground), which reads the types only
// (TypesOnly) and runs validator itself.
//
// # Cost
//
//   - CheckJSON scans a body without allocating, unless an object has more
//     than 32 keys or the body is rejected. DecodeJSON allocates once per
//     object, array, string and number, like encoding/json.
//   - StructSchema.Decode and the bodies of fx.Op (fx's typed operations
//     and fx.JSONBody) read a body once: CheckJSON's checks, the decode of
//     every value at its field's offset and the constraint tags in one
//     pass, with one allocation for all the strings of a body of at most
//     4 KiB (none of them aliases the body) and one per slice.
//   - The builder allocates only its outputs (one map per object, one
//     slice per array), the boxed numbers of coerced query values, and the
//     issues of a failure. Object and Array implement Decoder and
//     GrammarChecker: fx runs them over the body bytes, which they check
//     once, and only the values they look at are decoded.
//   - Struct decodes a valid body straight into a new T in the one pass
//     above: one allocation for the T, one for its strings,
//     one per slice and pointer. The type and its tags are compiled
//     once, when the schema is built; the constraint checks then run over
//     the T without reflection and allocate nothing on a valid value
//     (except url, uri and maps). BenchmarkStructConstraints
//     measures them.
//   - Error work is bounded: fx asks a schema for at most Config.MaxIssues
//     issues (see ValidateMax and Limited), and the built-in schemas and
//     the adapters stop working there: the error work ends at that issue
//     instead of growing with the number of mistakes a body holds.
//
// # Lifetime
//
// A Schema must not retain the value it validates. The body a Decoder
// receives aliases the request buffer, which is reused once the request
// ends: neither the bytes nor strings that alias them may be kept.
// DecodeJSON and the built-in schemas copy what they return: their
// outputs never alias the input, and a handler may keep them.
//
// # Errors
//
// The package writes no response; fx turns its outcomes into envelopes:
//
//   - Issues: 422 FX_VALIDATION_ERROR, message "Request validation
//     failed", details.issues each with location ("body" or "query"), path
//     and message; details.truncated is true when there were more than
//     Config.MaxIssues.
//   - A body CheckJSON rejects (a *JSONError: not one JSON value, a
//     duplicate key, invalid UTF-8, a number beyond a float64, nesting
//     deeper than MaxDepth): the same 422, with one issue at location
//     "body".
//   - A Result built by Fail (an *InternalError), or a schema that panics:
//     500 FX_INTERNAL_ERROR, logged; never a 422.
package validate
