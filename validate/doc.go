// Package validate is Standard Schema v1 in Go: one small interface that
// any validation library can implement, so that fx reports the issues of
// every library in the same shape.
//
// What Validate receives from fx: for a route's Body, the request body
// decoded as JSON into any (objects map[string]any, arrays []any, numbers
// float64, and nil for an empty body); for a route's Query, a
// map[string]any whose values are string, or []string for a repeated key.
//
// Error work is bounded (see limit.go): fx asks a schema for at most
// Config.MaxIssues issues through the optional Limited and LimitedDecoder
// interfaces, which the built-in schemas implement by stopping there.
package validate
