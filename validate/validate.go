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

// Decoder is the optional fast path of a body Schema: it receives the raw
// body bytes and decodes them itself (typically straight into a struct),
// skipping the generic tree. fx calls ValidateJSON instead of Validate
// only for a non-empty body that CheckJSON accepted (one well-formed JSON
// value, no duplicate keys, valid UTF-8, no number beyond a float64), the
// bodies DecodeJSON accepts, unless the Decoder is a GrammarChecker that
// checks the grammar itself; an empty body still goes to Validate(nil).
// The Result must be the one Validate would give for DecodeJSON(body):
// the wire result is identical either way. body aliases the request
// buffer: do not retain it, nor strings that alias it.
type Decoder interface {
	Schema
	ValidateJSON(body []byte) Result
}

// GrammarChecker is the optional interface of a Decoder that checks the
// strict grammar of a body itself, in the pass that reads it. When
// ChecksGrammar reports true, fx hands ValidateJSON (and
// ValidateJSONLimit) every non-empty body of a JSON Content-Type without
// calling CheckJSON first, and the Decoder answers a body CheckJSON
// rejects with exactly one issue, the rejecting *JSONError's
// (JSONError.Issue), as Validate(DecodeJSON(body)) would have been
// refused; any other body it answers as a Decoder does. The built-in
// Struct, Object and Array schemas and the adapters in validate/adapters
// are GrammarCheckers.
//
// Cost: what it saves is fx's own CheckJSON, one more scan of every body
// (and, for an object of more than 32 keys, the key set of its
// duplicate check: on a body of 330,000 keys most of what validation
// allocates). fx asks once, when the route is registered, not per
// request.
type GrammarChecker interface {
	Decoder
	// ChecksGrammar reports whether ValidateJSON checks the grammar of
	// every body itself, as described above; it must not change over the
	// life of the schema.
	ChecksGrammar() bool
}

// InternalError marks a Result as a failure of the schema itself (a
// broken schema, a failed dependency), not of the value: fx answers it
// with 500 FX_INTERNAL_ERROR and logs Err, instead of a 422. Build one
// with Fail.
type InternalError struct {
	Err error
}

// Error returns the text of Err.
func (e *InternalError) Error() string {
	if e.Err == nil {
		return "validate: internal schema failure"
	}
	return "validate: internal schema failure: " + e.Err.Error()
}

// Unwrap returns Err.
func (e *InternalError) Unwrap() error { return e.Err }

// Fail returns the Result by which a Schema reports that it could not
// validate at all: its Value is an *InternalError wrapping err, and fx
// answers 500 FX_INTERNAL_ERROR (Issues, if any, are ignored). A Schema
// that panics is treated the same way.
func Fail(err error) Result { return Result{Value: &InternalError{Err: err}} }

// Err returns the *InternalError of a Result built by Fail, or nil.
func (r Result) Err() error {
	if ie, ok := r.Value.(*InternalError); ok {
		return ie
	}
	return nil
}
