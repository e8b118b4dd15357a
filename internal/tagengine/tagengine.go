// Package tagengine is what fx's typed operations (fx.Op) and fxtest's strict
// mode need of package validate's tag engine for types known only at run
// time: the decoder of an Op's Body type, and the reading and the constraint
// tags of its path, query and header fields. validate registers them when it is
// initialized; no user of fx calls them (a user names a type and gets
// validate.Struct[T]).
//
// The interfaces are generic in the issue type so that this package does
// not import validate (which imports it to register): callers name
// validate.Issue, as in tagengine.For[validate.Issue]().
package tagengine

import (
	"reflect"
	"unsafe"
)

// Body decodes the JSON body of a type known at run time. It is built
// once per type and safe for concurrent use.
type Body[Issue any] interface {
	// DecodeAt reads body once into the value at at, a zero value of the
	// type: the strict grammar (err is exactly validate.CheckJSON(body),
	// a *validate.JSONError), every value decoded at its field, then the
	// constraint tags (issues nil when they pass). A body that does not
	// fit the type gets every type mismatch, stopping at max (0: no
	// limit), then the constraint issues of the fields that type-checked;
	// the value is then its zero value. Strings written into it never
	// alias body: they are copied into room (its capacity; len(room) 0,
	// nil: no room) while they fit there, the rest into one allocation
	// for those of a body of at most 4 KiB. Cost on a body that fits: one
	// pass, that allocation unless room held every string, one per slice
	// and pointer; no reflection (at is the value's address: no interface
	// to unpack).
	DecodeAt(body []byte, at unsafe.Pointer, room []byte, max int) (issues []Issue, err error)
	// JSONSchema describes the type as a request body.
	JSONSchema() map[string]any
}

// Field is the constraint tags (validate, pattern, doc, example) of one
// struct field whose value is not read from a JSON body. Safe for
// concurrent use.
type Field[Issue any] interface {
	// Constrained reports whether the tags hold any rule (a field with
	// only doc or example tags has none).
	Constrained() bool
	// Required reports whether the tags hold required.
	Required() bool
	// Check runs the rules over the value at p, which points at a value
	// of the field's type; the paths are relative to the field. At most
	// max issues (0: no limit). Cost: no allocation when the value passes.
	Check(p unsafe.Pointer, max int) []Issue
	// JSONSchema is the schema of the field's value as a request sends
	// it.
	JSONSchema() map[string]any
}

// Param reads the raw strings of one path, query or header field: the
// one reading of a raw value that validate.QueryStruct uses too (the
// JSON number grammar, ParseBool, RFC 3339, UnmarshalText). Safe for
// concurrent use.
type Param interface {
	// Slice reports whether the field is a slice: one element per
	// value of a repeated key.
	Slice() bool
	// EmptyIsValue reports whether an empty value is a value (a string
	// kind) rather than an absent one.
	EmptyIsValue() bool
	// Set reads s into the field at at (a slice field's element at at);
	// owned says s may be kept, else a string is copied. It returns the
	// refusal's message, "" when the value is set. Cost: no allocation
	// for a number or a boolean; a string's copy; a pointer field's value.
	Set(s string, owned bool, at unsafe.Pointer) string
	// Grow sets the slice field at at to n zero elements and returns the
	// first element's address and the elements' size.
	Grow(at unsafe.Pointer, n int) (first unsafe.Pointer, size uintptr)
}

// Compilers is what validate registers.
type Compilers[Issue any] struct {
	// Body returns the decoder of t, or the *validate.TagError of each
	// constraint tag of t that cannot be honoured (joined).
	Body func(t reflect.Type) (Body[Issue], error)
	// Field compiles the tags of field f of struct type owner; the error
	// is as Body's.
	Field func(owner reflect.Type, f reflect.StructField) (Field[Issue], error)
	// Param returns the reader of a path, query or header field of type
	// t, or an error naming the types such a field may have.
	Param func(t reflect.Type) (Param, error)
}

var registered any // *Compilers[Issue] of the issue type validate registered

// Register is called by validate's initialization.
func Register[Issue any](c *Compilers[Issue]) { registered = c }

// For returns what validate registered. A program that imports fx has
// imported validate, so it is there before any fx.Op is built.
func For[Issue any]() *Compilers[Issue] { return registered.(*Compilers[Issue]) }
