package validate

import (
	"errors"
	"reflect"
	"unsafe"
)

// fieldRules are the constraint tags of one struct field whose value is
// not read from a JSON body: fx.Op's path, query and header fields take
// the same validate, pattern, doc and example tags as body fields
// (internal/tagengine's Field). Compiled once; safe for concurrent use.
type fieldRules struct {
	v  *vplan
	fp fplan
	f  reflect.StructField
}

// compileField compiles the tags of field f of struct type owner. The
// error is the *TagError of each tag that cannot be honoured (joined). A
// field without constraint tags gives rules whose Check passes
// everything.
func compileField(owner reflect.Type, f reflect.StructField) (*fieldRules, error) {
	c := &compiler{structs: map[reflect.Type]*splan{}}
	vtag, hasV := f.Tag.Lookup("validate")
	pat, hasPat := f.Tag.Lookup("pattern")
	if vtag == "-" {
		hasV = false
	}
	fp := c.field(owner, f, hasV, vtag, hasPat, pat)
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	return &fieldRules{v: fp.v, fp: fp, f: f}, nil
}

// Constrained reports whether the tags hold any rule (a field with only
// doc or example tags has none): a value can then be refused.
func (r *fieldRules) Constrained() bool { return r != nil && r.v != nil }

// Required reports whether the tags hold required: an absent value is
// refused with "Required".
func (r *fieldRules) Required() bool {
	if r.v == nil {
		return false
	}
	for _, x := range r.v.rules {
		if x.req {
			return true
		}
	}
	return false
}

// Check runs the rules over the value at p, which must point at a value
// of the field's type; the issues' paths are relative to the field (an
// element of a dived slice: ["1"]). At most max issues (0: no limit).
// Cost: no allocation when the value passes (see tagcheck.go).
func (r *fieldRules) Check(p unsafe.Pointer, max int) []Issue {
	return r.v.run(p, nil, max, nil)
}

// JSONSchema is the schema of the field's value as a request sends it:
// its type's, with the keywords of its tags.
func (r *fieldRules) JSONSchema() map[string]any {
	d := describe(r.f.Type)
	m := requestSchema(d)
	describeField(m, fdesc{d: d, ptr: r.f.Type.Kind() == reflect.Pointer}, &r.fp, true)
	return m
}

// requestSchema describes a value a request sends (see describer).
func requestSchema(d *tdesc) map[string]any {
	return typeSchema(d, &describer{open: map[*tdesc]bool{}, rules: true, request: true})
}
