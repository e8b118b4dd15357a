package validate

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
)

// StructSchema validates a JSON value against the shape of a Go type T
// (its JSON tags, as encoding/json reads them) and decodes it into a *T.
// Build it with Struct or QueryStruct.
//
// Unlike a plain decoder, which stops at the first mismatch, it reports
// the type error of every field together ("Expected a string, got a
// number" at ["items","1","sku"]). It checks types only: a field that is
// absent keeps its zero value, as with encoding/json, and unknown keys are
// ignored. Combine it with a constraint library (the go-playground adapter
// does) or an Object check for required fields and ranges.
//
// Result.Value is a *T. It implements Decoder: a valid body is decoded
// straight from the bytes into a T with go-json (no intermediate tree, one
// allocation for the T plus what its fields need) after a scan of the
// bytes that checks the types without allocating; a body that fails that
// scan is never handed to go-json (which decodes all of it before
// reporting its first type error) and its issues are found over the
// bytes too, stopping at the limit of ValidateJSONLimit (Limited,
// LimitedDecoder).
type StructSchema[T any] struct {
	d     *tdesc
	query bool
	wide  bool // T holds a 64-bit integer somewhere (see ValidateJSON)
}

// Struct returns the schema of T, which must be a struct type (or a
// pointer, slice or map of one). The type is examined once, here.
func Struct[T any]() *StructSchema[T] {
	d := describe(reflect.TypeFor[T]())
	return &StructSchema[T]{d: d, wide: hasWideInt(d, map[*tdesc]bool{})}
}

// QueryStruct returns the schema of T for a route's query string: fields
// of T are matched by their JSON tags, and the strings of the query are
// coerced by the rules of Query (number grammar, "true"/"false", empty
// value = absent for non-string fields, repeated key only for slice
// fields). Result.Value is a *T.
func QueryStruct[T any]() *StructSchema[T] {
	d := describe(reflect.TypeFor[T]())
	return &StructSchema[T]{d: d, query: true, wide: hasWideInt(d, map[*tdesc]bool{})}
}

// Validate checks v (the generic tree: map[string]any, []any, float64,
// ...) against T and decodes it into a new *T. nil (an empty body) is the
// issue "Required".
func (s *StructSchema[T]) Validate(v any) Result { return s.ValidateLimit(v, 0) }

// ValidateLimit is Validate stopping at max issues (see Limited).
func (s *StructSchema[T]) ValidateLimit(v any, max int) Result {
	if v == nil {
		return Result{Issues: []Issue{{Path: []string{}, Message: "Required"}}}
	}
	st := &state{query: s.query, max: max}
	out := checkType(s.d, v, st)
	if len(st.issues) > 0 {
		return Result{Issues: st.issues}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return Fail(fmt.Errorf("validate: re-encoding a checked value: %w", err))
	}
	p := new(T)
	if err := json.Unmarshal(b, p); err != nil {
		return Result{Issues: []Issue{decodeIssue(err)}}
	}
	return Result{Value: p}
}

// ValidateJSON is the fast path (see Decoder): go-json decodes body
// straight into a new T; only when that fails is the body decoded into the
// tree and checked by Validate, which reports every issue. A body with an
// integer of 16 digits or more, for a T with 64-bit integer fields, also
// takes the tree: go-json would decode 2^53+3 exactly into an int64 where
// Validate (which sees the float64 of the tree) rejects it, and both paths
// must give the same Result.
//
// On a body that go-json rejects, the type check first walks the bytes
// (no tree; it stops at the issue limit of ValidateJSONLimit); only when
// that finds nothing (a custom UnmarshalJSON refused its input) is the
// tree built.
func (s *StructSchema[T]) ValidateJSON(body []byte) Result { return s.ValidateJSONLimit(body, 0) }

// ValidateJSONLimit is ValidateJSON stopping at max issues (see
// LimitedDecoder).
func (s *StructSchema[T]) ValidateJSONLimit(body []byte, max int) Result {
	if string(bytes.TrimSpace(body)) == "null" {
		return s.Validate(nil) // as Validate(DecodeJSON(body)) does
	}
	if s.query || typeFits(s.d, &cursor{data: body}) {
		p := new(T)
		if err := json.Unmarshal(body, p); err == nil && !(s.wide && hasLongNumber(body)) {
			return Result{Value: p}
		}
	}
	if !s.query {
		st := &state{max: max}
		streamType(s.d, &cursor{data: body}, st)
		if len(st.issues) > 0 {
			return Result{Issues: st.issues}
		}
	}
	tree, err := DecodeJSON(body)
	if err != nil {
		var je *JSONError
		if errors.As(err, &je) {
			return Result{Issues: []Issue{{Path: nonNil(je.Path), Message: je.Message}}}
		}
		return Result{Issues: []Issue{{Path: []string{}, Message: err.Error()}}}
	}
	return s.ValidateLimit(tree, max)
}

// Decode is what fx.JSONBody does with a body CheckJSON accepted: when
// the body fits T (every type check of Validate passes) go-json decodes it
// into a new *T; otherwise issues are those ValidateJSONLimit(body, max)
// reports, found over the bytes and stopping at max, and nothing is
// decoded. Unlike ValidateJSON it keeps go-json's reading of two bodies:
// an integer beyond 2^53 is decoded exactly into a 64-bit field, and null
// gives the zero T. err is go-json's error when the body fits the types
// but the decoder still refused it and no issue explains why.
func (s *StructSchema[T]) Decode(body []byte, max int) (p *T, issues []Issue, err error) {
	if typeFits(s.d, &cursor{data: body}) {
		p = new(T)
		if err = json.Unmarshal(body, p); err == nil {
			return p, nil, nil
		}
	}
	res := s.ValidateJSONLimit(body, max)
	if len(res.Issues) > 0 {
		return nil, res.Issues, nil
	}
	if err == nil {
		err = res.Err()
	}
	if err == nil {
		err = errors.New("validate: body refused by the decoder")
	}
	return nil, nil, err
}

// hasWideInt reports whether d has a 64-bit integer anywhere below it.
func hasWideInt(d *tdesc, seen map[*tdesc]bool) bool {
	if seen[d] {
		return false
	}
	seen[d] = true
	switch d.kind {
	case tInt, tUint:
		return d.bits == 64
	case tSlice, tMap:
		return hasWideInt(d.elem, seen)
	case tStruct:
		for _, f := range d.fields {
			if hasWideInt(f.d, seen) {
				return true
			}
		}
	}
	return false
}

// hasLongNumber reports whether the JSON text data (well formed) has, outside
// its strings, a run of 16 or more digits: the only way to write an integer
// beyond 2^53 that go-json decodes into an integer field.
func hasLongNumber(data []byte) bool {
	inString, run := false, 0
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch {
		case c >= '0' && c <= '9':
			if run++; run >= 16 {
				return true
			}
		case c == '"':
			inString, run = true, 0
		default:
			run = 0
		}
	}
	return false
}

func nonNil(p []string) []string {
	if p == nil {
		return []string{}
	}
	return p
}

// decodeIssue translates a decoder error that the type check did not
// foresee (a custom UnmarshalJSON rejecting its input).
func decodeIssue(err error) Issue {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return Issue{Path: strings.Split(te.Field, "."), Message: "Has an invalid value"}
	}
	return Issue{Path: []string{}, Message: "Has an invalid value"}
}

// ---- type descriptions

type tkind uint8

const (
	tAny    tkind = iota // anything: interface, json.Unmarshaler, ",string" fields
	tString              // string
	tBool                // bool
	tInt                 // signed integer of bits
	tUint                // unsigned integer of bits
	tFloat               // float
	tSlice               // slice or array of elem
	tMap                 // map with string keys of elem
	tStruct              // struct with fields
	tTime                // time.Time: RFC 3339 string
	tText                // encoding.TextUnmarshaler: a string
	tBytes               // []byte: base64 string
)

type tdesc struct {
	kind   tkind
	bits   int
	elem   *tdesc
	fields []fdesc
	byName map[string]int
}

type fdesc struct {
	name string
	d    *tdesc
}

var (
	descCache        sync.Map // reflect.Type -> *tdesc
	jsonUnmarshalerT = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerT = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeT            = reflect.TypeFor[time.Time]()
)

func describe(t reflect.Type) *tdesc {
	if d, ok := descCache.Load(t); ok {
		return d.(*tdesc)
	}
	d := describeIn(t, map[reflect.Type]*tdesc{})
	descCache.Store(t, d)
	return d
}

func describeIn(t reflect.Type, seen map[reflect.Type]*tdesc) *tdesc {
	if d, ok := seen[t]; ok {
		return d
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if d, ok := seen[t]; ok {
		return d
	}
	d := &tdesc{}
	seen[t] = d
	pt := reflect.PointerTo(t)
	switch {
	case t == timeT:
		d.kind = tTime
		return d
	case t.Implements(jsonUnmarshalerT) || pt.Implements(jsonUnmarshalerT):
		d.kind = tAny
		return d
	case t.Implements(textUnmarshalerT) || pt.Implements(textUnmarshalerT):
		d.kind = tText
		return d
	}
	switch t.Kind() {
	case reflect.String:
		d.kind = tString
	case reflect.Bool:
		d.kind = tBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.kind, d.bits = tInt, t.Bits()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		d.kind, d.bits = tUint, t.Bits()
	case reflect.Float32, reflect.Float64:
		d.kind, d.bits = tFloat, t.Bits()
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(jsonUnmarshalerT) {
			d.kind = tBytes
			return d
		}
		d.kind, d.elem = tSlice, describeIn(t.Elem(), seen)
	case reflect.Array:
		d.kind, d.elem = tSlice, describeIn(t.Elem(), seen)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			d.kind = tAny // integer or text keys: the decoder decides
			return d
		}
		d.kind, d.elem = tMap, describeIn(t.Elem(), seen)
	case reflect.Struct:
		d.kind = tStruct
		d.byName = map[string]int{}
		addFields(d, t, seen, 0)
	default:
		d.kind = tAny
	}
	return d
}

// addFields lists the JSON fields of struct t into d, flattening embedded
// structs without a name tag as encoding/json does (outer fields win).
func addFields(d *tdesc, t reflect.Type, seen map[reflect.Type]*tdesc, depth int) {
	if depth > 8 {
		return
	}
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fd := describeIn(f.Type, seen)
		if strings.Contains(","+opts+",", ",string,") {
			fd = &tdesc{kind: tAny}
		}
		if _, dup := d.byName[name]; dup {
			continue
		}
		d.byName[name] = len(d.fields)
		d.fields = append(d.fields, fdesc{name: name, d: fd})
	}
	for _, et := range embedded {
		addFields(d, et, seen, depth+1)
	}
}

// field finds the field for key: exact match first, then case-insensitive
// (as encoding/json and go-json match).
func (d *tdesc) field(key string) (*tdesc, bool) {
	if i, ok := d.byName[key]; ok {
		return d.fields[i].d, true
	}
	for _, f := range d.fields {
		if strings.EqualFold(f.name, key) {
			return f.d, true
		}
	}
	return nil, false
}

// checkType reports every type mismatch of v against d and returns the
// value to decode (v itself, or its coercion in query mode).
func checkType(d *tdesc, v any, st *state) any {
	if v == nil {
		return nil // null leaves the zero value, as in encoding/json
	}
	if s, ok := v.(string); ok && st.query {
		return coerce(d, s, st)
	}
	switch d.kind {
	case tAny:
		return v
	case tString:
		if _, ok := v.(string); !ok {
			st.add("Expected a string, got " + kindOf(v))
		}
	case tText:
		if _, ok := v.(string); !ok {
			st.add("Expected a string, got " + kindOf(v))
		}
	case tBytes:
		s, ok := v.(string)
		if !ok {
			st.add("Expected a base64-encoded string, got " + kindOf(v))
		} else if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			st.add("Expected a base64-encoded string")
		}
	case tTime:
		s, ok := v.(string)
		if !ok {
			st.add("Expected a date-time string (RFC 3339), got " + kindOf(v))
		} else if _, err := time.Parse(time.RFC3339, s); err != nil {
			st.add("Expected a date-time string (RFC 3339), got " + quoteInput(s))
		}
	case tBool:
		if _, ok := v.(bool); !ok {
			st.add("Expected a boolean, got " + kindOf(v))
		}
	case tInt, tUint, tFloat:
		f, ok := v.(float64)
		if !ok {
			what := "an integer"
			if d.kind == tFloat {
				what = "a number"
			}
			st.add("Expected " + what + ", got " + kindOf(v))
			return v
		}
		checkNumber(d, f, st)
	case tSlice:
		a, ok := v.([]any)
		if !ok {
			st.add("Expected an array, got " + kindOf(v))
			return v
		}
		for i, e := range a {
			if st.full() {
				break
			}
			st.push(strconv.Itoa(i))
			checkType(d.elem, e, st)
			st.pop()
		}
	case tMap:
		m, ok := v.(map[string]any)
		if !ok {
			st.add("Expected an object, got " + kindOf(v))
			return v
		}
		for _, k := range sortedKeys(m) {
			if st.full() {
				break
			}
			st.push(k)
			checkType(d.elem, m[k], st)
			st.pop()
		}
	case tStruct:
		m, ok := v.(map[string]any)
		if !ok {
			st.add("Expected an object, got " + kindOf(v))
			return v
		}
		if st.query {
			return checkQueryStruct(d, m, st)
		}
		for _, k := range sortedKeys(m) {
			if st.full() {
				break
			}
			fd, ok := d.field(k)
			if !ok {
				continue
			}
			st.push(k)
			checkType(fd, m[k], st)
			st.pop()
		}
	}
	return v
}

func checkNumber(d *tdesc, f float64, st *state) {
	switch d.kind {
	case tInt:
		if f != math.Trunc(f) {
			st.add("Expected an integer, got " + fmtNum(f))
			return
		}
		lo, hi := -math.Ldexp(1, d.bits-1), math.Ldexp(1, d.bits-1)-1
		if d.bits == 64 {
			lo, hi = -maxSafeInt, maxSafeInt
		}
		if f < lo {
			st.add("Must be at least " + fmtNum(lo))
		} else if f > hi {
			st.add("Must be at most " + fmtNum(hi))
		}
	case tUint:
		if f != math.Trunc(f) {
			st.add("Expected an integer, got " + fmtNum(f))
			return
		}
		hi := math.Ldexp(1, d.bits) - 1
		if d.bits == 64 {
			hi = maxSafeInt
		}
		if f < 0 {
			st.add("Must be at least 0")
		} else if f > hi {
			st.add("Must be at most " + fmtNum(hi))
		}
	case tFloat:
		if d.bits == 32 && math.Abs(f) > math.MaxFloat32 {
			st.add("Number is too large")
		}
	}
}

// coerce turns one query string into the JSON value d expects.
func coerce(d *tdesc, s string, st *state) any {
	switch d.kind {
	case tInt, tUint, tFloat:
		f, ok := parseQueryNumber(s)
		if !ok {
			what := "an integer"
			if d.kind == tFloat {
				what = "a number"
			}
			st.add("Expected " + what + ", got " + quoteInput(s))
			return nil
		}
		checkNumber(d, f, st)
		return f
	case tBool:
		switch s {
		case "true":
			return true
		case "false":
			return false
		}
		st.add("Expected true or false, got " + quoteInput(s))
		return nil
	case tSlice:
		return []any{coerce(d.elem, s, st)}
	case tMap, tStruct:
		st.add("Expected an object, got a string")
		return nil
	case tTime, tBytes:
		// a string in a body too: the same check (format, base64)
		st.query = false
		checkType(d, s, st)
		st.query = true
	}
	return s
}

// checkQueryStruct applies the rules of Query to a query map.
func checkQueryStruct(d *tdesc, m map[string]any, st *state) any {
	out := make(map[string]any, len(m))
	for _, k := range sortedKeys(m) {
		if st.full() {
			break
		}
		fd, ok := d.field(k)
		if !ok {
			continue
		}
		st.push(k)
		switch raw := m[k].(type) {
		case string:
			if raw == "" && fd.kind != tString && fd.kind != tText && fd.kind != tAny {
				break // an empty value is absent
			}
			out[k] = coerce(fd, raw, st)
		case []string:
			if fd.kind != tSlice {
				st.add(fmt.Sprintf("Expected a single value, got %d", len(raw)))
				break
			}
			vals := make([]any, len(raw))
			for i, s := range raw {
				if st.full() {
					break
				}
				st.push(strconv.Itoa(i))
				vals[i] = coerce(fd.elem, s, st)
				st.pop()
			}
			out[k] = vals
		default:
			out[k] = checkType(fd, raw, st)
		}
		st.pop()
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
