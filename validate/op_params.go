package validate

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unsafe"
)

// fx.Op's path, query and header fields: paramOf compiles how one field
// is read (param: a scalar, a pointer to one, or a slice of them) and
// compileField its constraint tags (fieldRules); what one raw string
// means is the query rules' (scalar, query.go).

// paramKinds lists the Go types a path, query or header field may have
// (the words of the Boot error for another).
const paramKinds = "string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, " +
	"float32, float64, time.Time, []byte, a type implementing encoding.TextUnmarshaler, a pointer to one of " +
	"those (optional: nil when absent), or (query only) a slice of one of those but []byte (one element per repeated key)"

// param is how fx.Op reads one path, query or header field of type t:
// a scalar, a pointer to one, or a slice of them.
type param struct {
	t     reflect.Type // the scalar's Go type
	d     *tdesc
	ptr   bool // the field is *t: allocated when a value is present
	slice bool // the field is []t: one element per value
	kind  reflect.Kind
}

// paramOf returns the reader of a field of type ft, or the error naming
// what a field may be.
func paramOf(ft reflect.Type) (*param, error) {
	p := &param{}
	t := ft
	switch {
	case t.Kind() == reflect.Pointer:
		p.ptr, t = true, t.Elem()
	case t.Kind() == reflect.Slice && t != reflect.TypeFor[[]byte]() && descOf(t).kind == tSlice:
		p.slice, t = true, t.Elem()
	}
	d := descOf(t)
	switch d.kind {
	case tString, tBool, tInt, tUint, tFloat, tTime, tText:
	case tBytes:
		if p.slice {
			d = nil
		}
	default:
		d = nil
	}
	if d == nil || t.Kind() == reflect.Pointer || t.Kind() == reflect.Uintptr || t.Kind() == reflect.Array ||
		(d.kind == tText && !reflect.PointerTo(t).Implements(textUnmarshalerT)) {
		return nil, fmt.Errorf("cannot bind a %s: a path, query or header field is a %s", ft, paramKinds)
	}
	p.t, p.d, p.kind = t, d, t.Kind()
	return p, nil
}

// Slice reports whether the field takes one element per value.
func (p *param) Slice() bool { return p.slice }

// EmptyIsValue reports whether an empty raw value is a value (a string
// kind) rather than an absent one.
func (p *param) EmptyIsValue() bool { return emptyIsValue(p.d) }

// Set reads s into the field at at (for a slice field, into the element
// at at); owned says s may be kept (else a string is copied). It returns
// the issue's message, "" when set. Cost: as scalar; a string field's
// copy; a pointer field's allocation.
func (p *param) Set(s string, owned bool, at unsafe.Pointer) string {
	if p.ptr && !p.slice {
		v := reflect.New(p.t).UnsafePointer()
		if issue := p.set(s, owned, v); issue != "" {
			return issue
		}
		*(*unsafe.Pointer)(at) = v
		return ""
	}
	return p.set(s, owned, at)
}

func (p *param) set(s string, owned bool, at unsafe.Pointer) string {
	num, b, issue := scalar(p.d, p.t, s, at)
	if issue != "" {
		return issue
	}
	switch p.d.kind {
	case tString:
		if !owned {
			s = strings.Clone(s)
		}
		*(*string)(at) = s
	case tBool:
		*(*bool)(at) = b
	case tInt, tUint, tFloat:
		setNumber(p.kind, at, num)
	}
	return ""
}

// setNumber stores f, checked for kind's range, at at.
func setNumber(kind reflect.Kind, at unsafe.Pointer, f float64) {
	switch kind {
	case reflect.Int:
		*(*int)(at) = int(f)
	case reflect.Int8:
		*(*int8)(at) = int8(f)
	case reflect.Int16:
		*(*int16)(at) = int16(f)
	case reflect.Int32:
		*(*int32)(at) = int32(f)
	case reflect.Int64:
		*(*int64)(at) = int64(f)
	case reflect.Uint:
		*(*uint)(at) = uint(f)
	case reflect.Uint8:
		*(*uint8)(at) = uint8(f)
	case reflect.Uint16:
		*(*uint16)(at) = uint16(f)
	case reflect.Uint32:
		*(*uint32)(at) = uint32(f)
	case reflect.Uint64:
		*(*uint64)(at) = uint64(f)
	case reflect.Float32:
		*(*float32)(at) = float32(f)
	case reflect.Float64:
		*(*float64)(at) = f
	}
}

// Grow sets the slice field at at to n zero elements and returns the
// first one's address and the elements' size.
func (p *param) Grow(at unsafe.Pointer, n int) (first unsafe.Pointer, size uintptr) {
	s := reflect.MakeSlice(reflect.SliceOf(p.t), n, n)
	reflect.NewAt(s.Type(), at).Elem().Set(s)
	return s.UnsafePointer(), p.t.Size()
}

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
	fp := c.field(owner, f, tagsOf(f))
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
// Cost: no allocation when the value passes (see rules.go).
func (r *fieldRules) Check(p unsafe.Pointer, max int) []Issue {
	return r.v.run(p, nil, max, nil)
}

// JSONSchema is the schema of the field's value as a request sends it:
// its type's, with the keywords of its tags.
func (r *fieldRules) JSONSchema() map[string]any {
	d := descOf(r.f.Type)
	m := requestSchema(d)
	describeField(m, fdesc{d: d, ptr: r.f.Type.Kind() == reflect.Pointer}, &r.fp, true)
	return m
}
