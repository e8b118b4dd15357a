package validate

import (
	"encoding/binary"
	"reflect"
	"sync/atomic"
	"unicode/utf8"
)

// The decoding plan of a Go type (dnode), compiled once into the type's
// cache entry (typeInfo): which values the one pass (decode.go) writes
// itself, at which offsets, with which keys, and which it hands to
// go-json (dGo).

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
