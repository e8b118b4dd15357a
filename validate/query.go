package validate

import (
	"encoding"
	"encoding/base64"
	"fmt"
	"iter"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/fxhq/fx/internal/jsonscan"
)

// The query rules: what one raw string of a query, a path or a header
// means for a Go type. scalar decides it for QueryStruct (coerce) and for
// fx.Op's path, query and header fields (paramOf, through
// internal/tagengine); the builder's Query reads numbers and booleans with
// the same grammar (parseQueryNumber, queryBool); queryValue decides what
// a key present, repeated or empty means, for Query's objects and
// QueryStruct.
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

// coerce turns one query string into the JSON value d expects: scalar
// decides what it means (t is the scalar's Go type, for a
// TextUnmarshaler's own reading; nil when not known).
func coerce(d *tdesc, t reflect.Type, s string, st *state) any {
	switch d.kind {
	case tInt, tUint, tFloat, tBool, tTime, tBytes, tText, tString:
		if d.kind == tText && t == nil {
			d = &tdesc{kind: tString} // the decoder reads it, as a body's
		}
		num, b, issue := scalar(d, t, s, nil)
		if issue != "" {
			st.add(issue)
			if d.kind == tInt || d.kind == tUint || d.kind == tFloat {
				return num
			}
			return nil
		}
		switch d.kind {
		case tInt, tUint, tFloat:
			return num
		case tBool:
			return b
		}
	case tSlice:
		return []any{coerce(d.elem, nil, s, st)}
	case tMap, tStruct:
		mismatch(d, kindOf(s), st)
		return nil
	}
	return s
}

// paramType is the scalar Go type of a query field of type t: t without
// its pointer, or a slice's element.
func paramType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 {
		t = t.Elem()
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// fieldsIn yields the keys of m that are fields of the struct d, in
// sorted order (the order of the issues), with their fields, until the
// issue limit is reached.
func fieldsIn(d *tdesc, m map[string]any, st *state) iter.Seq2[string, *fdesc] {
	return func(yield func(string, *fdesc) bool) {
		for _, k := range sortedKeys(m) {
			if st.full() {
				return
			}
			if f := d.field(k); f != nil && !yield(k, f) {
				return
			}
		}
	}
}

// checkQueryStruct applies the rules of Query to a query map.
func checkQueryStruct(d *tdesc, m map[string]any, st *state) any {
	out := make(map[string]any, len(m))
	for k, f := range fieldsIn(d, m, st) {
		fd := f.d
		st.push(k)
		raw, present, _ := queryValue(m[k], fd.kind == tSlice, emptyIsValue(fd), st)
		switch raw := raw.(type) {
		case string:
			out[k] = coerce(fd, paramType(f.typ), raw, st)
		case []string:
			vals := make([]any, len(raw))
			et := paramType(f.typ)
			for i, s := range raw {
				if st.full() {
					break
				}
				st.push(strconv.Itoa(i))
				vals[i] = coerce(fd.elem, et, s, st)
				st.pop()
			}
			out[k] = vals
		default:
			if present {
				out[k] = checkMember(fd, f.null, raw, st)
			}
		}
		st.pop()
	}
	return out
}

// queryBool is a query string as a boolean (ParseBool); anything else is
// an issue (and nil).
func queryBool(s string, st *state) any {
	v, issue := ParseBool(s)
	if issue != "" {
		st.add(issue)
		return nil
	}
	return v
}

// ParseBool reads a boolean from text, as fx reads every query, path and
// header boolean (Query, QueryStruct, and the parameters of fx.Op):
// strconv.ParseBool's set, which Echo, Gin, Huma and OpenAPI request
// validators read too. 1, t, T, TRUE, true and True are true; 0, f, F,
// FALSE, false and False are false. issue is empty for those, else the
// message fx answers with: Expected true or false, got "yes" (the input
// quoted, cut at 40 bytes). Cost: no allocation for a boolean; the issue
// and its error allocate.
func ParseBool(s string) (v bool, issue string) {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, "Expected true or false, got " + quoteInput(s)
	}
	return v, ""
}

// parseQueryNumber accepts exactly the JSON number grammar: "-1", "2.5",
// "1e3"; not " 5", "+5", "05", "0x10", ".5", "NaN", "Inf", or a number too
// large for a float64.
func parseQueryNumber(s string) (float64, bool) {
	// the scanner reads the bytes in place: s is not written
	end, _, f := jsonscan.Number(unsafe.Slice(unsafe.StringData(s), len(s)), 0)
	if f != jsonscan.None || end != len(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}
