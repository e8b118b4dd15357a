package validate

import (
	"encoding"
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"
)

// Parameters: what one raw string of a query, a path or a header means
// for a Go type. scalar decides it, once, for QueryStruct (coerce) and
// for fx.Op's path, query and header fields (paramOf, through
// internal/tagengine); the builder's Query reads numbers with the same
// grammar (parseQueryNumber).
//
// The grammar is JSON's, the stricter of the two fx once had: a number
// is a JSON number ("-1", "2.5", "1e3"; not "+5", "05", "0x10", ".5",
// "NaN", "Inf"), an integer kind takes a whole number within its Go
// type's range (64-bit kinds within ±2^53, as in a body), a float32
// within its range; so the value of ?n=… is exactly what {"n":…} would
// be, and NaN and ±Inf never reach a handler. A boolean is ParseBool's
// set; a time.Time is RFC 3339; a []byte is standard base64; a type
// implementing encoding.TextUnmarshaler is its UnmarshalText's. Every
// string kind must be valid UTF-8 (a body's strings must be).

// paramKinds lists the Go types a path, query or header field may have
// (the words of the Boot error for another).
const paramKinds = "string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, " +
	"float32, float64, time.Time, []byte, a type implementing encoding.TextUnmarshaler, a pointer to one of " +
	"those (optional: nil when absent), or (query only) a slice of one of those but []byte (one element per repeated key)"

// scalar reads s, one raw value, as the scalar type t whose description
// is d. Numbers are returned in num (checked: whole and within range for
// an integer kind) and booleans in b; a time.Time, a []byte and a
// TextUnmarshaler are decoded into at, a value of type t (a scratch one
// when at is nil); a string kind is only checked. issue is the message
// of a refusal, "" when s is a value of t. Cost: no allocation for a
// number, a boolean or a string; a time is parsed, a []byte decoded,
// UnmarshalText called (with a copy of s).
func scalar(d *tdesc, t reflect.Type, s string, at unsafe.Pointer) (num float64, b bool, issue string) {
	switch d.kind {
	case tInt, tUint, tFloat:
		f, ok := parseQueryNumber(s)
		if !ok {
			return 0, false, "Expected " + wants[d.kind] + ", got " + quoteInput(s)
		}
		f += 0 // -0 is 0: an unsigned kind takes it, and every reading gets the same value
		if !checkNumber(d, f, nil) {
			return f, false, numberIssue(d, f)
		}
		return f, false, ""
	case tBool:
		v, issue := ParseBool(s)
		return 0, v, issue
	}
	if issue := textIssue(s); issue != "" {
		return 0, false, issue
	}
	switch d.kind {
	case tTime, tBytes:
		if !checkText(d, s, nil) {
			st := newState(false, 1)
			checkText(d, s, st)
			return 0, false, st.issues[0].Message
		}
		if at == nil {
			return 0, false, ""
		}
		if d.kind == tTime {
			*(*time.Time)(at), _ = time.Parse(time.RFC3339, s)
		} else {
			*(*[]byte)(at), _ = base64.StdEncoding.DecodeString(s)
		}
	case tText:
		if at == nil {
			at = reflect.New(t).UnsafePointer()
		}
		u := reflect.NewAt(t, at).Interface().(encoding.TextUnmarshaler)
		if u.UnmarshalText([]byte(s)) != nil {
			return 0, false, "Has an invalid value"
		}
	}
	return 0, false, ""
}

// textIssue is the refusal of a raw string that is not valid UTF-8, ""
// for one that is.
func textIssue(s string) string {
	if !utf8.ValidString(s) {
		return "Expected a string, got invalid UTF-8"
	}
	return ""
}

// queryValue applies the query rules to the raw value of a key the query
// holds (a string, or []string for a repeated key), for a field that is
// a list (an array, a slice) or not, and whose kind takes an empty string
// as a value (text: a string kind) or not: a repeated key is refused
// unless the field is a list ("Expected a single value, got 2", reported
// into st: refused), an empty value is absent unless text, and the one
// value of a list is its element 0. present is false for an absent or
// refused value. Query's objects and QueryStruct read a query through it.
func queryValue(raw any, list, text bool, st *state) (v any, present, refused bool) {
	switch r := raw.(type) {
	case []string:
		if !list {
			st.add(fmt.Sprintf("Expected a single value, got %d", len(r)))
			return nil, false, true
		}
	case string:
		if r == "" && !text {
			return nil, false, false
		}
		if list {
			return []string{r}, true, false
		}
	}
	return raw, true, false
}

// emptyIsValue reports whether an empty raw value is a value of kind d
// (a string kind other than time.Time and []byte) rather than an absent
// one, in a query as QueryStruct reads it.
func emptyIsValue(d *tdesc) bool {
	return d.kind == tString || d.kind == tText || d.kind == tAny
}

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
