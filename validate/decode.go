package validate

import (
	"encoding/binary"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/fxhq/fx/internal/jsonscan"
	json "github.com/goccy/go-json"
)

// The one-pass decoder of typed bodies. A body is read once, on the
// strict reader's tokens and state (strict.go): the grammar, duplicate
// keys, UTF-8, number range and depth are checked while each value is
// written straight into the destination at its field's offset (the
// offsets the type description, types.go, records); the constraint
// plan (rules.go) then runs over the value. Nothing is decoded twice and
// no intermediate tree is built.
//
// What the walk writes itself: strings, booleans, integer and float
// kinds, slices, pointers and structs (embedded structs included). The
// stated fallback, per value: a value of any other type (an interface, a
// map, an array, time.Time, []byte, a json or text unmarshaler, a
// ",string" field, a struct whose flattened fields shadow one another or
// are reached through an embedded pointer) is checked by the strict walk
// (decode_fit.go) and handed, as its own bytes, to go-json; so is a
// field's value when a key matched ignoring case names a field met
// before (go-json merges each such key into the field in turn). go-json
// never reads a whole body beside the walk: the walk decides every body
// itself. It is the one decoder of typed bodies: fx.Op's (typeDecoder),
// StructSchema.Decode and StructSchema.ValidateJSON all read through it
// and share its error path (stopped).
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

type dop uint8

const (
	dGo     dop = iota // the fallback: strict walk, then go-json on the value's bytes
	dString            // a string kind
	dBool              // a bool kind
	dInt               // a signed integer kind of bits
	dUint              // an unsigned integer kind of bits
	dFloat             // a float kind of bits
	dSlice             // a slice of elem
	dPtr               // a pointer to elem
	dStruct            // a struct: its flattened fields at fixed offsets
)

// dnode is the decoding plan of one Go type.
type dnode struct {
	op     dop
	t      reflect.Type
	d      *tdesc // the type's description (kinds, JSON names): the walk's guide
	bits   int
	lo, hi int64 // dInt, dUint: the range (intRange)
	elem   *dnode
	fields []*dnode // dStruct: the plan of d.fields[i]
	offs   []uintptr
	keys   []dkey // dStruct with at most 8 fields: d.fields[i]'s key, for matchKey
	// arrays caches the array types backing a slice, by capacity class
	// (4 << i elements).
	arrays [24]atomic.Pointer[reflect.Type]
}

// dplanOf returns the decoding plan of t (once, in t's cache entry).
func dplanOf(t reflect.Type) *dnode {
	e := infoOf(t)
	e.decOnce.Do(func() { e.dec = compileDecode(t, map[reflect.Type]*dnode{}) })
	return e.dec
}

func compileDecode(t reflect.Type, seen map[reflect.Type]*dnode) *dnode {
	if n, ok := seen[t]; ok {
		return n
	}
	n := &dnode{t: t, d: descOf(t)}
	seen[t] = n
	if t.Kind() == reflect.Pointer {
		if n.d.kind == tAny || n.d.kind == tText || n.d.kind == tTime {
			return n // a pointer to an unmarshaler: go-json decides what null and the rest mean
		}
		n.op, n.elem = dPtr, compileDecode(t.Elem(), seen)
		return n
	}
	switch n.d.kind {
	case tString:
		n.op = dString
	case tBool:
		n.op = dBool
	case tInt:
		n.op, n.bits = dInt, n.d.bits
		n.lo, n.hi = intRange(tInt, n.bits)
	case tUint:
		n.op, n.bits = dUint, n.d.bits
		n.lo, n.hi = intRange(tUint, n.bits)
	case tFloat:
		n.op, n.bits = dFloat, n.d.bits
	case tSlice:
		if t.Kind() == reflect.Slice {
			n.op, n.elem = dSlice, compileDecode(t.Elem(), seen)
		}
	case tStruct:
		if n.d.shadowed {
			return n
		}
		for _, f := range n.d.fields {
			if f.indirect || f.str {
				n.fields, n.offs = nil, nil
				return n
			}
			n.fields = append(n.fields, compileDecode(f.typ, seen))
			n.offs = append(n.offs, f.off)
		}
		if len(n.d.fields) <= 8 && allPlain(n.d.fields) {
			for _, f := range n.d.fields {
				n.keys = append(n.keys, keyOf(f.name))
			}
		}
		n.op = dStruct
	}
	return n
}

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

// fillString reads the string at pos into the string at at (see the
// strings paragraph above).
func (p *parser) fillString(at unsafe.Pointer) error {
	end, verbatim, f := jsonscan.String(p.data, p.pos, true)
	if f != jsonscan.None {
		return errMisfit
	}
	raw := p.data[p.pos+1 : end-1]
	p.pos = end
	if len(raw) == 0 {
		return nil
	}
	if cap(p.arena)-len(p.arena) < len(raw) { // (an unescaped string is never longer than its escaped text)
		switch need := len(p.data) - p.pos + len(raw); {
		case p.arena == nil && len(raw) <= cap(p.room):
			p.arena = p.room[:0] // the caller's: no allocation
		case need > arenaMax:
			if verbatim {
				*(*string)(at) = string(raw)
			} else {
				*(*string)(at) = string(jsonscan.Unescape(nil, raw))
			}
			return nil
		default:
			// the rest of the body bounds every string still to come
			p.arena = make([]byte, 0, need)
		}
	}
	s := len(p.arena)
	if verbatim {
		p.arena = append(p.arena, raw...)
	} else {
		p.arena = jsonscan.Unescape(p.arena, raw)
	}
	if len(p.arena) > s {
		*(*string)(at) = unsafe.String(&p.arena[s], len(p.arena)-s)
	}
	return nil
}

// fillInt reads a plain integer (plainInt) into the integer kind at at;
// any other number is fillIntSlow's.
func (p *parser) fillInt(n *dnode, at unsafe.Pointer) error {
	start := p.pos
	end, _, f := jsonscan.Number(p.data, start)
	if f != jsonscan.None {
		return errMisfit
	}
	tok := p.data[start:end]
	v, plain := plainInt(tok)
	if !plain || (n.op == dUint && tok[0] == '-') {
		return p.fillIntSlow(n, at, end)
	}
	p.pos = end
	if v < n.lo || v > n.hi {
		return errMisfit
	}
	if n.op == dInt {
		switch n.bits {
		case 8:
			*(*int8)(at) = int8(v)
		case 16:
			*(*int16)(at) = int16(v)
		case 32:
			*(*int32)(at) = int32(v)
		default:
			*(*int64)(at) = v
		}
		return nil
	}
	switch n.bits {
	case 8:
		*(*uint8)(at) = uint8(v)
	case 16:
		*(*uint16)(at) = uint16(v)
	case 32:
		*(*uint32)(at) = uint32(v)
	default:
		*(*uint64)(at) = uint64(v)
	}
	return nil
}

// plainInt is the value of the number tok when it is a plain integer:
// no fraction, no exponent, at most 15 digits, so exact as a float64
// (false: another number, which the caller parses). The decoder and the
// strict walk read integers through it.
func plainInt(tok []byte) (v int64, ok bool) {
	digits := tok
	if tok[0] == '-' {
		digits = tok[1:]
	}
	if len(digits) > 15 {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if tok[0] == '-' {
		v = -v
	}
	return v, true
}

// fillIntSlow decides the number from pos to end that fillInt's loop
// does not read (a fraction, an exponent, 16 digits or more, a negative
// number for an unsigned kind), as the type walk and go-json's reading
// of the whole body answer together: a value the walk refuses (not
// integral, out of range, "Number is too large") stops the pass as any
// misfit; an integral value written with a fraction or an exponent, or
// -0 for an unsigned kind, is a refusal (go-json's type error); a plain
// integer of 16 digits or more that the walk accepts (its float64 is in
// range) is written exactly, as go-json writes it. Not inlined: fillInt
// stays as small as it was.
//
//go:noinline
func (p *parser) fillIntSlow(n *dnode, at unsafe.Pointer, end int) error {
	tok := unsafe.String(&p.data[p.pos], end-p.pos)
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil || !checkNumber(n.d, f, nil) {
		return errMisfit
	}
	if strings.ContainsAny(tok, ".eE") || (n.op == dUint && tok[0] == '-') {
		return &refusal{}
	}
	p.pos, p.long = end, true
	if n.op == dInt { // only a 64-bit kind takes 16 digits
		v, err := strconv.ParseInt(tok, 10, 64)
		if err != nil {
			return &refusal{}
		}
		*(*int64)(at) = v
		return nil
	}
	v, err := strconv.ParseUint(tok, 10, 64)
	if err != nil {
		return &refusal{}
	}
	*(*uint64)(at) = v
	return nil
}

// fillFloat reads a number into the float kind at at, as go-json does
// (parsed as a float64; a float32 takes its conversion, within range).
func (p *parser) fillFloat(n *dnode, at unsafe.Pointer) error {
	start := p.pos
	end, _, f := jsonscan.Number(p.data, start)
	if f != jsonscan.None {
		return errMisfit
	}
	v, err := strconv.ParseFloat(unsafe.String(&p.data[start], end-start), 64)
	if err != nil {
		return errMisfit // "Number is too large": the error path words it
	}
	p.pos = end
	if n.bits == 32 {
		if !checkNumber(n.d, v, nil) {
			return errMisfit
		}
		*(*float32)(at) = float32(v)
		return nil
	}
	*(*float64)(at) = v
	return nil
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

// fillStruct reads the object at pos into the struct at at: each key
// naming a field exactly is decoded at the field's offset (duplicates
// found by the field's bit, as the strict walk's fitObject finds them), an unknown key's
// value is read by the strict reader and dropped, and a key naming a
// field only ignoring case (tdesc.fold) is that field's: decoded as any
// other the first time the field is met, and through fillGo, merged
// into what is there, when it is met again.
func (p *parser) fillStruct(n *dnode, at unsafe.Pointer) error {
	d := n.d
	start := p.pos
	if empty, err := p.open('}'); empty || err != nil {
		return err
	}
	framed := false
	var seen uint64 // the fields met, by any key (the first 64, by index)
	var fs foldState
	for {
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return errMisfit
		}
		keyAt, i := p.pos, -1
		if n.keys != nil {
			i, p.pos = n.matchKey(p.data, keyAt)
		}
		if i < 0 {
			end, verbatim, f := jsonscan.String(p.data, keyAt, true)
			if f != jsonscan.None {
				return errMisfit
			}
			p.pos = end
			key := p.data[keyAt+1 : end-1]
			if verbatim {
				i = d.exact(bytesKey(key))
			}
			if i < 0 || i >= 64 {
				var err error
				if key, err = p.slowKey(start, keyAt, key, !verbatim, &framed); err != nil {
					return err
				}
				if i = d.exact(bytesKey(key)); i < 0 || (i >= 64 && fs.high) {
					var read bool
					if seen, i, read, err = p.foldedKey(n, at, i, key, seen, &fs); err != nil {
						return err
					}
					if read {
						if more, err := p.next('}'); err != nil || !more {
							return p.endObject(err, framed)
						}
						continue
					}
				}
			}
		}
		if i >= 0 && i < 64 {
			if seen&(1<<i) != 0 {
				if err := p.exactAgain(n, at, i, &fs); err != nil {
					return err
				}
				if more, err := p.next('}'); err != nil || !more {
					return p.endObject(err, framed)
				}
				continue
			}
			seen |= 1 << i
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return errMisfit
		}
		p.pos++
		p.skipSpace()
		var err error
		c := byte(0)
		if p.pos < len(p.data) {
			c = p.data[p.pos]
		}
		switch {
		case i >= 0 && c == '"' && n.fields[i].op == dString:
			err = p.fillString(unsafe.Add(at, n.offs[i])) // fill's commonest case, without its dispatch
		case i >= 0 && c == 'n' && !d.fields[i].null && !p.holes:
			return errMisfit // null where the field does not take it (takesNull)
		case i >= 0:
			err = p.fill(n.fields[i], unsafe.Add(at, n.offs[i]))
		case d.closed && !p.holes:
			return errMisfit // an unknown key of a closed struct: the error path words it
		default:
			_, err = p.value()
		}
		if err != nil {
			if i >= 0 {
				return within(err, d.fields[i].name)
			}
			return err
		}
		more, err := p.next('}')
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	p.closeObject(framed)
	return nil
}

// foldState is fillStruct's record of the fields met through keys
// matched ignoring case, kept apart from its loop (which reads only the
// bit set of the fields met): folds, the first 64 fields met by such a
// key; exacts, those of them met by their exact key too; high, a field
// past the 64th met by such a key.
type foldState struct {
	folds, exacts uint64
	high          bool
}

// foldedKey reads, for fillStruct, the member of key (unescaped), which
// names no field exactly (i < 0) or names field i past the 64th after a
// key matched ignoring case named one of those: a key naming a field
// ignoring case (tdesc.fold) is read by foldedMember, merged into the
// field when the field was met before (for a field past the 64th,
// always: fillGo over a zero value is fill). It returns seen updated,
// the field's index and whether it read the member (false: an unknown
// key, i -1, left to the loop).
//
//go:noinline
func (p *parser) foldedKey(n *dnode, at unsafe.Pointer, i int, key []byte, seen uint64, fs *foldState) (uint64, int, bool, error) {
	seg := ""
	if i >= 0 {
		seg = n.d.fields[i].name
	} else if i = n.d.fold(bytesKey(key)); i < 0 {
		return seen, -1, false, nil
	} else {
		seg = string(key) // go-json's issue path names the key as written
	}
	again := i >= 64
	if again {
		fs.high = true
	} else {
		bit := uint64(1) << i
		if again = seen&bit != 0; again && fs.folds&bit == 0 {
			fs.exacts |= bit // met before by its exact key
		}
		seen |= bit
		fs.folds |= bit
	}
	return seen, i, true, p.foldedMember(n, at, i, seg, again)
}

// exactAgain reads, for fillStruct, the member of an exact key naming
// field i (of the first 64), which was met before: a duplicate key
// (errMisfit) unless every earlier key naming it matched it ignoring
// case, when the value is merged into the field (foldedMember).
//
//go:noinline
func (p *parser) exactAgain(n *dnode, at unsafe.Pointer, i int, fs *foldState) error {
	bit := uint64(1) << i
	if fs.folds&bit == 0 || fs.exacts&bit != 0 {
		return errMisfit // a duplicate
	}
	fs.exacts |= bit
	return p.foldedMember(n, at, i, n.d.fields[i].name, true)
}

// endObject ends fillStruct after a member foldedMember read: err, or
// the object closed.
//
//go:noinline
func (p *parser) endObject(err error, framed bool) error {
	if err == nil {
		p.closeObject(framed)
	}
	return err
}

// foldedMember reads the colon and the value of field i of the struct
// at at, for a member fillStruct's loop leaves to it: one whose key names
// the field only ignoring case (seg: the key as written, which go-json's
// issue path names), or one naming a field met before through such a key
// (again). The value of a field met again goes to fillGo: go-json, like
// encoding/json, decodes each such key into the field in turn, merging
// into what an earlier key wrote, and the fallback does exactly that for
// this value. Not inlined: the loop stays as it was for the keys that
// name their field exactly.
//
//go:noinline
func (p *parser) foldedMember(n *dnode, at unsafe.Pointer, i int, seg string, again bool) error {
	p.skipSpace()
	if p.pos >= len(p.data) || p.data[p.pos] != ':' {
		return errMisfit
	}
	p.pos++
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == 'n' && !n.d.fields[i].null && !p.holes {
		return errMisfit // null where the field does not take it (takesNull)
	}
	var err error
	if again {
		err = p.fillGo(n.fields[i], unsafe.Add(at, n.offs[i]))
	} else {
		err = p.fill(n.fields[i], unsafe.Add(at, n.offs[i]))
	}
	return within(err, seg)
}

// dkey is a field's JSON name as matchKey compares it, followed by the
// closing quote: the first eight bytes of that text as a little-endian
// word (mask keeps the bytes it has: all eight from a name of 7 bytes
// on), and, past them, the rest of the name (tail; the quote after it is
// checked apart).
type dkey struct {
	word, mask uint64
	n          int
	tail       string
}

// allPlain reports whether every name of fields is text a JSON key holds
// as it stands (valid UTF-8 without a quote, a backslash or a control
// character), as matchKey requires: a tag may name a field otherwise.
func allPlain(fields []fdesc) bool {
	for _, f := range fields {
		if !utf8.ValidString(f.name) {
			return false
		}
		for i := 0; i < len(f.name); i++ {
			if c := f.name[i]; c < 0x20 || c == '"' || c == '\\' {
				return false
			}
		}
	}
	return true
}

// keyOf is name's dkey.
func keyOf(name string) dkey {
	quoted := name + `"`
	var b [8]byte
	k := copy(b[:], quoted)
	k0 := dkey{word: binary.LittleEndian.Uint64(b[:]), mask: ^uint64(0), n: len(name)}
	if k < 8 {
		k0.mask = 1<<(8*k) - 1
	}
	if len(name) > 8 {
		k0.tail = name[8:]
	}
	return k0
}

// matchKey reads the key whose opening quote is at data[at] when it is
// exactly the name of one of the struct's fields (at most 8 of them) and
// returns that field's index and the offset after the key's closing
// quote; otherwise it returns -1 and reads nothing (the caller scans the
// key). The names hold no quote, backslash or control character and are
// valid UTF-8 (allPlain), so a key equal to one followed by a quote is a
// well-formed key with no escape: matching the name and its quote is the
// scan. Cost:
// one word load and, per field, one mask and one comparison (the bytes of
// a longer name past its eighth compared only for the field they could
// name); nothing when fewer than nine bytes follow the quote.
func (n *dnode) matchKey(data []byte, at int) (i, end int) {
	at++
	if at+8 > len(data) {
		return -1, at - 1
	}
	w := binary.LittleEndian.Uint64(data[at:])
	for i := range n.keys {
		k := &n.keys[i]
		if w&k.mask != k.word {
			continue
		}
		if k.n < 8 {
			return i, at + k.n + 1
		}
		if e := at + k.n; e < len(data) && data[e] == '"' && bytesKey(data[at+8:e]) == k.tail {
			return i, e + 1
		}
	}
	return -1, at - 1
}
