package validate

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	json "github.com/goccy/go-json"
)

// The one-pass decoder of typed bodies. A body is read once, on the
// strict reader's tokens and state (strict.go): the grammar, duplicate
// keys, UTF-8, number range and depth are checked while each value is
// written straight into the destination at its field's offset (the
// offsets the type description, plan.go, records); the constraint
// plan (plan_rules.go, rules.go) then runs over the value. Nothing is decoded twice and
// no intermediate tree is built.
//
// What the walk writes itself: strings, booleans, integer and float
// kinds, slices, pointers and structs (embedded structs included). The
// stated fallback, per value: a value of any other type (an interface, a
// map, an array, time.Time, []byte, a json or text unmarshaler, a
// ",string" field, a struct whose flattened fields shadow one another or
// are reached through an embedded pointer) is checked by the strict walk
// (typecheck_bytes.go) and handed, as its own bytes, to go-json; so is a
// field's value when a key matched ignoring case names a field met
// before (go-json merges each such key into the field in turn). go-json
// never reads a whole body beside the walk: the walk decides every body
// itself. fx.Op's body (typeDecoder), StructSchema.Decode,
// StructSchema.ValidateJSON and StructSchema.Validate (the re-encoding
// of a checked tree: decodeChecked) read through it (dnode.pass) and
// answer a body it stops on through its error path (stopped).
//
// Keys: a key naming a field exactly is that field's; any other is
// matched ignoring case as go-json and encoding/json match it (tdesc.fold:
// Unicode simple folding, the first field in the Go struct's order).
// Integers: a plain integer is written; one written with a fraction or
// an exponent is refused when its value is not an integer in range (a
// misfit, as the type walk words it) and, when it is one (2.0, 1e2),
// refused as go-json refuses it: a refusal, the body's one issue "Has an
// invalid value" at the value's path; an unmarshaler's error is a
// refusal too. A misfit, a refusal or a fault of the grammar stops the
// walk; the caller's error path then reads the body again only to word
// the issues (see typeDecoder.Decode), decoding nothing.
//
// Strings: the walk copies the strings of a body of at most arenaMax
// bytes into one buffer allocated at the first string (one allocation
// for all of them; a string kept by the handler keeps that buffer
// alive), or first into the room its caller offers (fx.Op offers room
// allocated with its input struct: no allocation of its own), and the
// buffer only for the strings that do not fit there; in a larger body
// each string is its own allocation. No string
// the walk writes aliases the request buffer: a handler may keep them
// after the request.

// arenaMax is the largest remainder of a body whose strings share one
// buffer.
const arenaMax = 4096

// pass reads body once into the value at at (a zero value of the
// plan's type), writing its strings into room (its capacity; len 0)
// while they fit there (see the strings paragraph above; nil offers
// none). err is nil when the pass decided the body alone, a *refusal
// for a value go-json's reading refuses (the first met), errMisfit for
// anything else: the value is then partly written, and the body is the
// error path's (stopped). long reports an integer of 16 digits or more
// written (exact, as go-json writes it, where the tree of DecodeJSON
// holds its float64: StructSchema.ValidateJSON's answer differs then).
// holes is for the re-encoding of a type-checked tree, whose left-out
// values (jsontree.Hole) are null: null is then the zero value wherever
// it stands, as go-json reads it, not a misfit (parser.holes).
// Decode (fx.Op, JSONBody), StructSchema.ValidateJSON and Validate's
// decode of a checked tree read through it.
func (n *dnode) pass(body []byte, at unsafe.Pointer, room []byte, holes bool) (long bool, err error) {
	p := getParser(body, false)
	p.room, p.holes = room, holes
	p.skipSpace()
	err = p.fill(n, at)
	p.skipSpace()
	if err == nil && p.pos != len(p.data) {
		err = errMisfit
	}
	long = p.long
	p.arena, p.room, p.long, p.holes = nil, nil, false, false
	putParser(p)
	return long, err
}

// fill reads the value at pos (white space skipped) into at, as n says.
func (p *parser) fill(n *dnode, at unsafe.Pointer) error {
	if p.pos >= len(p.data) {
		return errMisfit
	}
	c := p.data[p.pos]
	if c == 'n' && n.op != dGo { // null leaves the zero value
		return p.word("null")
	}
	switch n.op {
	case dString:
		if c != '"' {
			return errMisfit
		}
		return p.fillString(at)
	case dBool:
		switch c {
		case 't':
			*(*bool)(at) = true
			return p.word("true")
		case 'f':
			return p.word("false")
		}
		return errMisfit
	case dInt, dUint:
		return p.fillInt(n, at)
	case dFloat:
		return p.fillFloat(n, at)
	case dSlice:
		if c != '[' {
			return errMisfit
		}
		return p.fillSlice(n, at)
	case dPtr:
		v := reflect.New(n.elem.t).UnsafePointer()
		if err := p.fill(n.elem, v); err != nil {
			return err
		}
		*(*unsafe.Pointer)(at) = v
		return nil
	case dStruct:
		if c != '{' {
			return errMisfit
		}
		return p.fillStruct(n, at)
	}
	return p.fillGo(n, at)
}

// fillGo is the fallback for one value: the strict walk, then go-json
// over the value's own bytes, into the value at at as it stands (zero,
// or, for a field met again through a key matched ignoring case, the
// value written before: go-json merges into it as it would have in a
// decode of the whole body). A value the walk accepts and go-json
// refuses (an unmarshaler's error) is a *refusal.
func (p *parser) fillGo(n *dnode, at unsafe.Pointer) error {
	start := p.pos
	if err := p.fit(n.d.typed()); err != nil {
		return err
	}
	if err := json.Unmarshal(p.data[start:p.pos], reflect.NewAt(n.t, at).Interface()); err != nil {
		return &refusal{err: err}
	}
	return nil
}

// refusal is a value of the right kind and range that go-json's reading
// of it refuses: an integer written with a fraction or an exponent (2.0,
// 1e2), -0 for an unsigned kind, or an error of the fallback's go-json
// (a json or text unmarshaler's). The body's answer, when the type walk
// finds no issue in it, is the one issue "Has an invalid value"
// (refusal.issue), where go-json's decode of the whole body put it.
// path lists, innermost first, the JSON names and indexes of the
// members the refusal unwound through; err is go-json's error (nil: an
// integer's).
type refusal struct {
	path []string
	err  error
}

func (r *refusal) Error() string { return "validate: a value go-json refuses" }

// issue is the refusal's issue, as decodeIssue words go-json's error for
// the whole body: at the value's path (keys as written, indexes) when
// the error is a type error, at the root otherwise (an unmarshaler's own
// error, which go-json returns as it is).
func (r *refusal) issue() Issue {
	var te *json.UnmarshalTypeError
	if r.err != nil && !errors.As(r.err, &te) {
		return decodeIssue(r.err)
	}
	path := make([]string, 0, len(r.path)+1)
	for i := len(r.path) - 1; i >= 0; i-- {
		path = append(path, r.path[i])
	}
	if te != nil && te.Field != "" {
		path = append(path, strings.Split(te.Field, ".")...)
	}
	return Issue{Path: path, Message: "Has an invalid value"}
}

// within adds seg to the path of err when it is a refusal.
func within(err error, seg string) error {
	if r, ok := err.(*refusal); ok {
		r.path = append(r.path, seg)
	}
	return err
}

// sliceHeader is the layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// fillSlice reads the array at pos into the slice at at. The elements are
// decoded in place into a backing array that doubles when full (4
// elements first): one allocation for up to 4 elements, one more at each
// doubling. An empty array is an empty, non-nil slice.
func (p *parser) fillSlice(n *dnode, at unsafe.Pointer) error {
	empty, err := p.open(']')
	if err != nil {
		return err
	}
	h := (*sliceHeader)(at)
	if empty {
		h.data = reflect.New(n.arrayOf(-1)).UnsafePointer() // zero size: no allocation
		return nil
	}
	size := n.elem.t.Size()
	class := 0
	arr := reflect.New(n.arrayOf(class)).UnsafePointer()
	capacity, length := 4, 0
	for {
		if length == capacity {
			class++
			grown := reflect.New(n.arrayOf(class)).UnsafePointer()
			reflect.Copy(reflect.NewAt(n.arrayOf(class), grown).Elem(), reflect.NewAt(n.arrayOf(class-1), arr).Elem())
			arr, capacity = grown, capacity*2
		}
		if !n.d.elemNull && p.pos < len(p.data) && p.data[p.pos] == 'n' && !p.holes {
			return errMisfit // null where the element does not take it (takesNull)
		}
		if err := p.fill(n.elem, unsafe.Add(arr, uintptr(length)*size)); err != nil {
			return within(err, strconv.Itoa(length))
		}
		length++
		more, err := p.next(']')
		if err != nil {
			return err
		}
		if !more {
			p.fitDepth--
			break
		}
	}
	h.data, h.len, h.cap = arr, length, capacity
	return nil
}

// arrayOf returns the array type of 4<<class elements (class -1: none).
func (n *dnode) arrayOf(class int) reflect.Type {
	if class < 0 {
		return reflect.ArrayOf(0, n.elem.t)
	}
	if class >= len(n.arrays) {
		return reflect.ArrayOf(4<<class, n.elem.t)
	}
	if t := n.arrays[class].Load(); t != nil {
		return *t
	}
	t := reflect.ArrayOf(4<<class, n.elem.t)
	n.arrays[class].Store(&t)
	return t
}

// stopped is the error path of the one pass, for a body it stopped on
// (stop: why), reading the body again only to word why, decoding
// nothing: err is CheckJSON's error when the grammar refuses the body;
// else the type issues found over the bytes (stopping at max) followed
// by the constraint issues of the fields that type-checked
// (lenientRules); else, when the types fit (or td is nil: the body is
// the re-encoding of a tree whose types were checked), the one issue of
// the value the pass refused (refused true). Decode, ValidateJSON and
// Validate's decode of a checked tree answer through it.
func stopped(td *typeDecoder, body []byte, max int, stop error) (issues []Issue, refused bool, err error) {
	if err := CheckJSON(body); err != nil {
		return nil, false, err
	}
	if td != nil {
		st := newState(false, max)
		typeIssues(td.d, body, st)
		if len(st.issues) > 0 {
			return lenientRules(td.d, td.plan, td.t, false, treeOf(body, td.plan, st.issues, max), st.issues, max), false, nil
		}
	}
	if r, ok := stop.(*refusal); ok {
		return []Issue{r.issue()}, true, nil
	}
	// Not reached from a body or a query string: a value the type check
	// let through uncoerced (in query mode, a string nested in an array
	// or an object of a tree built by hand). go-json refuses it too, at
	// a path of its own; the issue is the root's.
	return []Issue{decodeIssue(stop)}, true, nil
}
