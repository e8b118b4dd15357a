// Package validate is Standard Schema v1 in Go: one small interface that
// any validation library can implement, so that fx reports the issues of
// every library in the same shape.
//
// What Validate receives from fx: for a route's Body, the request body
// decoded as JSON into any (objects map[string]any, arrays []any, numbers
// float64, and nil for an empty body); for a route's Query, a
// map[string]any whose values are string, or []string for a repeated key.
package validate

// Schema validates a value. Implementations must report every failure, not
// only the first, and must not retain value after returning.
type Schema interface {
	Validate(value any) Result
}

// Result is the outcome of Validate. It is a success when Issues is empty;
// Value is then the validated (possibly transformed) value handed to the
// handler.
type Result struct {
	Value  any     // the validated (possibly transformed) value; used when Issues is empty
	Issues []Issue // every failure, never only the first
}

// Issue is one failure.
type Issue struct {
	Path    []string // e.g. ["items", "1", "name"]; empty for the value itself
	Message string
}
