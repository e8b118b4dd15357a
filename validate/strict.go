package validate

import (
	"hash/maphash"
	"strconv"
	"sync"
	"unsafe"

	"github.com/fxhq/fx/internal/jsonscan"
)

// This file is the strict JSON reader fx uses for request bodies. It
// accepts exactly one JSON value (RFC 8259), optionally surrounded by
// whitespace, and rejects what encoding/json and go-json accept silently:
// duplicate object keys (compared after unescaping) and invalid UTF-8. It
// has two modes sharing one grammar: CheckJSON only scans (no allocation
// on the happy path, for schemas that decode the bytes themselves) and
// DecodeJSON builds the tree Schema.Validate receives.
//
// The tokens (white space, strings, numbers, literals) and the unescaping
// are internal/jsonscan's, the JSON scanner shared with the WASM
// response parser; this file holds the structure: value, array and object
// call one another, the depth limit, the duplicate-key check, and the
// wording of every error.

// MaxDepth is how deeply arrays and objects may nest in a body; deeper
// input is rejected (it protects the stack, and no real payload needs it).
const MaxDepth = 512

// smallObject is how many keys an object may have before duplicate
// detection in CheckJSON switches from a linear scan to a map.
const smallObject = 32

// JSONError is why CheckJSON or DecodeJSON rejected a body. Message is
// plain English meant for the client; Path names the offending key for a
// duplicate key or an out-of-range number and is empty for a syntax error.
type JSONError struct {
	Offset  int      // byte offset in the input where the problem was found
	Path    []string // e.g. ["items", "0", "sku"] for a duplicate "sku"; empty for syntax errors
	Message string   // e.g. `Duplicate key "sku"`, "Not valid JSON: unexpected end of input"
}

// Error returns Message.
func (e *JSONError) Error() string { return e.Message }

// Issue is the one issue by which a body e rejects is refused: e's Path
// (empty, never nil, for a syntax error) and Message. fx answers such a
// body with it, at location "body"; a GrammarChecker returns it as the
// only issue of its Result.
func (e *JSONError) Issue() Issue { return Issue{Path: nonNil(e.Path), Message: e.Message} }

// CheckJSON reports whether data is exactly one well-formed JSON value
// with no duplicate keys, valid UTF-8 and no number too large for a
// float64, without building anything: it rejects exactly what DecodeJSON
// rejects, with the same error, always a *JSONError. It does not
// allocate unless the input has an object with more than 32 keys or is
// rejected. An empty (or all-whitespace) input is rejected.
func CheckJSON(data []byte) error {
	p := getParser(data, false)
	_, err := p.document()
	putParser(p)
	if err != nil {
		return err
	}
	return nil
}

// DecodeJSON decodes exactly one JSON value from data, as Schema.Validate
// receives it: objects map[string]any, arrays []any, numbers float64,
// strings, booleans and nil. It rejects what CheckJSON rejects, numbers
// too large for a float64 included, with CheckJSON's *JSONError. Cost:
// one allocation per object, array, string and number, like
// encoding/json.
func DecodeJSON(data []byte) (any, error) {
	p := getParser(data, true)
	v, err := p.document()
	putParser(p)
	if err != nil {
		return nil, err
	}
	return v, nil
}

type frame struct {
	obj       bool
	idx       int      // array: index of the current element
	ks, ke    int      // object: the current key, in keys
	keysStart int      // object: where its keys start in offs
	keysBytes int      // object: where its keys start in keys
	start     int      // object: offset of its '{' (to look back on a hash match)
	set       *hashSet // object with more than smallObject keys: hashes of its keys
}

// hashSet is a set of 64-bit key hashes (open addressing, linear
// probing): 8 bytes a key, where a map[string]struct{} cost 90 bytes and
// an allocation a key (330,000 keys: 30 MB and 160 ms of CPU).
type hashSet struct {
	slots []uint64 // 0: empty (a hash of 0 is stored as 1)
	n     int
}

// add inserts h and reports whether it was there already.
func (s *hashSet) add(h uint64) bool {
	if h == 0 {
		h = 1
	}
	if (s.n+1)*4 > len(s.slots)*3 {
		old := s.slots
		s.slots, s.n = make([]uint64, max(2*len(old), 4*smallObject)), 0
		for _, x := range old {
			if x != 0 {
				s.add(x)
			}
		}
	}
	mask := len(s.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			s.slots[i] = h
			s.n++
			return false
		case h:
			return true
		}
	}
}

// keySeed seeds the key hashes of CheckJSON's duplicate check; it is
// random per process, so a client cannot build colliding keys.
var keySeed = maphash.MakeSeed()

type parser struct {
	data  []byte
	pos   int
	build bool
	stack []frame
	keys  []byte // unescaped keys of the open objects (scan mode, and for error paths)
	offs  []int  // start,end pairs into keys
	// fitDepth counts the open arrays and objects of the strict walk and
	// of the one-pass decoder (typecheck_bytes.go, decode.go) that took no frame;
	// they count towards MaxDepth.
	fitDepth int
	// arena holds the strings the one-pass decoder writes (decode.go),
	// in room when the caller offered room enough (dnode.pass);
	// long: it wrote an integer of 16 digits or more.
	arena, room []byte
	long        bool
	// holes: null is the zero value of any type, as go-json reads it
	// (the one-pass decoder over lenientRules' re-encoded tree, whose
	// left-out values are null); otherwise null stands only where the
	// type takes it (takesNull).
	holes bool
	// list collects the type issues of the strict walk (typecheck_bytes.go);
	// nil: the walk stops at the first misfit.
	list *state
}

var parserPool = sync.Pool{New: func() any { return &parser{} }}

func getParser(data []byte, build bool) *parser {
	p := parserPool.Get().(*parser)
	p.data, p.pos, p.build = data, 0, build
	return p
}

func putParser(p *parser) {
	for i := range p.stack {
		p.stack[i] = frame{}
	}
	p.data, p.stack, p.keys, p.offs, p.fitDepth, p.list = nil, p.stack[:0], p.keys[:0], p.offs[:0], 0, nil
	if cap(p.keys) > 64<<10 {
		p.keys = nil
	}
	parserPool.Put(p)
}

func (p *parser) document() (any, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, &JSONError{Offset: p.pos, Message: "Not valid JSON: the input is empty"}
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return nil, &JSONError{Offset: p.pos, Message: "Not valid JSON: unexpected data after the JSON value at byte " + strconv.Itoa(p.pos)}
	}
	return v, nil
}

func (p *parser) skipSpace() { p.pos = jsonscan.Space(p.data, p.pos) }

func (p *parser) syntax(what string) error {
	if p.pos >= len(p.data) {
		return &JSONError{Offset: p.pos, Message: "Not valid JSON: unexpected end of input"}
	}
	msg := "Not valid JSON: " + what + " at byte " + strconv.Itoa(p.pos)
	if c := p.data[p.pos]; c > 0x20 && c < 0x7f {
		msg = "Not valid JSON: unexpected character '" + string(rune(c)) + "' at byte " + strconv.Itoa(p.pos) + " (" + what + ")"
	}
	return &JSONError{Offset: p.pos, Message: msg}
}

// fault is the error for a token the scanner found malformed at offset
// at, worded as the reader words it.
func (p *parser) fault(at int, f jsonscan.Fault) error {
	p.pos = at
	var what string
	switch f {
	case jsonscan.Control:
		return &JSONError{Offset: at, Message: "Not valid JSON: control character in a string at byte " + strconv.Itoa(at)}
	case jsonscan.BadUTF8:
		return &JSONError{Offset: at, Message: "Not valid JSON: invalid UTF-8 at byte " + strconv.Itoa(at)}
	case jsonscan.BadWord:
		return &JSONError{Offset: at, Message: "Not valid JSON: unexpected word at byte " + strconv.Itoa(at)}
	case jsonscan.BadEscape:
		what = "invalid escape sequence"
	case jsonscan.BadHex:
		what = "expected four hex digits after \\u"
	case jsonscan.NoDigit:
		what = "expected a digit"
	case jsonscan.NoFraction:
		what = "expected a digit after the decimal point"
	case jsonscan.NoExponent:
		what = "expected a digit in the exponent"
	}
	return p.syntax(what) // jsonscan.End: "unexpected end of input"
}

// path renders the open frames as a path (only on errors).
func (p *parser) path() []string {
	out := []string{}
	for _, f := range p.stack {
		if f.obj {
			out = append(out, string(p.keys[f.ks:f.ke]))
		} else {
			out = append(out, strconv.Itoa(f.idx))
		}
	}
	return out
}

func (p *parser) value() (any, error) {
	if p.pos >= len(p.data) {
		return nil, p.syntax("expected a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, e, esc, err := p.str()
		if err != nil || !p.build {
			return nil, err
		}
		if !esc {
			return string(p.data[s:e]), nil
		}
		return string(jsonscan.Unescape(nil, p.data[s:e])), nil
	case c == 't':
		return true, p.lit("true")
	case c == 'f':
		return false, p.lit("false")
	case c == 'n':
		return nil, p.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, p.syntax("expected a value")
}

func (p *parser) lit(word string) error {
	end, f := jsonscan.Literal(p.data, p.pos, word)
	if f != jsonscan.None {
		return p.fault(end, f)
	}
	p.pos = end
	return nil
}

func (p *parser) number() (any, error) {
	start := p.pos
	end, exp, f := jsonscan.Number(p.data, start)
	if f != jsonscan.None {
		return nil, p.fault(end, f)
	}
	p.pos = end
	// the scan parses just the numbers that may exceed a float64, to
	// reject what DecodeJSON rejects
	if !p.build && withinFloat64(end-start, exp) {
		return nil, nil
	}
	v, err := strconv.ParseFloat(unsafe.String(&p.data[start], end-start), 64)
	if err != nil {
		return nil, &JSONError{Offset: start, Path: p.path(), Message: "Number is too large"}
	}
	if !p.build {
		return nil, nil
	}
	return v, nil
}

// str scans a string starting at the opening quote; s:e is its raw
// content, esc tells whether it contains escapes.
func (p *parser) str() (s, e int, esc bool, err error) {
	end, verbatim, f := jsonscan.String(p.data, p.pos, true)
	if f != jsonscan.None {
		return 0, 0, false, p.fault(end, f)
	}
	s, p.pos = p.pos+1, end
	return s, end - 1, !verbatim, nil
}

func (p *parser) push(f frame) error {
	if len(p.stack)+p.fitDepth >= MaxDepth {
		return &JSONError{Offset: p.pos, Message: "Not valid JSON: nested more than " + strconv.Itoa(MaxDepth) + " levels deep"}
	}
	p.stack = append(p.stack, f)
	return nil
}

func (p *parser) array() (any, error) {
	if p.emptyNext(']') {
		if p.build {
			return []any{}, nil
		}
		return nil, nil
	}
	if err := p.push(frame{}); err != nil {
		return nil, err
	}
	p.pos++ // [
	var out []any
	if p.build {
		out = []any{}
	}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.stack = p.stack[:len(p.stack)-1]
		return out, nil
	}
	for {
		v, more, err := p.item(']', "expected ',' or ']'")
		if err != nil {
			return nil, err
		}
		if p.build {
			out = append(out, v)
		}
		if !more {
			p.stack = p.stack[:len(p.stack)-1]
			return out, nil
		}
		p.stack[len(p.stack)-1].idx++
	}
}

// item reads the value at pos (an element, or a member's value) and the
// ',' or closer after it: more tells which one.
func (p *parser) item(closer byte, want string) (v any, more bool, err error) {
	p.skipSpace()
	if v, err = p.value(); err != nil {
		return nil, false, err
	}
	p.skipSpace()
	switch {
	case p.pos >= len(p.data):
		return nil, false, p.syntax("")
	case p.data[p.pos] == ',':
		p.pos++
		return v, true, nil
	case p.data[p.pos] == closer:
		p.pos++
		return v, false, nil
	}
	return nil, false, p.syntax(want)
}

// emptyNext reports whether the container opened at pos is empty ("{}",
// "[ ]") and, if so, moves past it: the scan then skips the frame push and
// pop, which were most of the cost of a body of a million empty items.
func (p *parser) emptyNext(closer byte) bool {
	if len(p.stack)+p.fitDepth >= MaxDepth { // the frame's depth check still applies
		return false
	}
	q := p.pos + 1
	for q < len(p.data) && (p.data[q] == ' ' || p.data[q] == '\t' || p.data[q] == '\n' || p.data[q] == '\r') {
		q++
	}
	if q < len(p.data) && p.data[q] == closer {
		p.pos = q + 1
		return true
	}
	return false
}

func (p *parser) object() (any, error) {
	if p.emptyNext('}') {
		if p.build {
			return map[string]any{}, nil
		}
		return nil, nil
	}
	if err := p.push(frame{obj: true, start: p.pos, keysStart: len(p.offs), keysBytes: len(p.keys)}); err != nil {
		return nil, err
	}
	p.pos++ // {
	var out map[string]any
	if p.build {
		out = map[string]any{}
	}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.popObject()
		return out, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.syntax("expected a key in double quotes")
		}
		keyAt := p.pos
		s, e, esc, err := p.str()
		if err != nil {
			return nil, err
		}
		if err := p.addKey(keyAt, p.data[s:e], esc, out); err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.syntax("expected ':' after a key")
		}
		p.pos++
		v, more, err := p.item('}', "expected ',' or '}'")
		if err != nil {
			return nil, err
		}
		if p.build {
			f := &p.stack[len(p.stack)-1]
			out[string(p.keys[f.ks:f.ke])] = v
		}
		if !more {
			p.popObject()
			return out, nil
		}
	}
}

// addKey records the key of the current object and reports a duplicate.
func (p *parser) addKey(at int, raw []byte, esc bool, out map[string]any) error {
	f := &p.stack[len(p.stack)-1]
	if out != nil || f.set != nil {
		// only the current key is needed (for error paths): reuse the space
		p.keys = p.keys[:f.keysBytes]
	}
	ks := len(p.keys)
	if esc {
		p.keys = jsonscan.Unescape(p.keys, raw)
	} else {
		p.keys = append(p.keys, raw...)
	}
	key := p.keys[ks:]
	f.ks, f.ke = ks, len(p.keys)
	dup := false
	switch {
	case out != nil:
		_, dup = out[unsafe.String(unsafe.SliceData(key), len(key))]
	case f.set != nil:
		// A set of 8-byte hashes, not of strings: 330,000 keys cost 30 MB
		// as strings. A hash match is confirmed by reading the keys before
		// this one again (a true duplicate ends the scan; a collision of
		// random-seeded 64-bit hashes practically never happens).
		if f.set.add(maphash.Bytes(keySeed, key)) {
			dup = p.seenBefore(f.start, at, key)
		}
	default:
		for i := f.keysStart; i < len(p.offs); i += 2 {
			if string(p.keys[p.offs[i]:p.offs[i+1]]) == string(key) {
				dup = true
				break
			}
		}
		if !dup && (len(p.offs)-f.keysStart)/2 >= smallObject {
			f.set = &hashSet{}
			for i := f.keysStart; i < len(p.offs); i += 2 {
				f.set.add(maphash.Bytes(keySeed, p.keys[p.offs[i]:p.offs[i+1]]))
			}
			f.set.add(maphash.Bytes(keySeed, key))
			// the set replaces the linear list of this object: it is dropped
			n := copy(p.keys[f.keysBytes:], key)
			p.keys = p.keys[:f.keysBytes+n]
			f.ks, f.ke = f.keysBytes, f.keysBytes+n
			p.offs = p.offs[:f.keysStart]
			return nil
		}
	}
	if dup {
		return &JSONError{Offset: at, Path: p.path(), Message: "Duplicate key " + strconv.Quote(string(key))}
	}
	if out == nil && f.set == nil {
		p.offs = append(p.offs, ks, len(p.keys))
	}
	return nil
}

// seenBefore reports whether the object starting at start has key among
// its keys before offset at (already scanned, so well formed).
func (p *parser) seenBefore(start, at int, key []byte) bool {
	c := jsonscan.Cursor{Data: p.data, Pos: start + 1}
	var buf []byte
	for {
		c.SkipSpace()
		if c.Pos >= at {
			return false
		}
		raw, esc := c.SkipString()
		k := raw[1 : len(raw)-1]
		if esc {
			buf = jsonscan.Unescape(buf[:0], k)
			k = buf
		}
		if string(k) == string(key) {
			return true
		}
		c.SkipSpace()
		c.Pos++ // :
		c.SkipValue()
		c.SkipSpace()
		if c.Peek() == ',' {
			c.Pos++
		}
	}
}

// popObject closes the current object, releasing its keys.
func (p *parser) popObject() {
	f := p.stack[len(p.stack)-1]
	p.keys = p.keys[:f.keysBytes]
	p.offs = p.offs[:f.keysStart]
	p.stack[len(p.stack)-1] = frame{}
	p.stack = p.stack[:len(p.stack)-1]
}

// withinFloat64 reports, without parsing it, that a JSON number of n
// bytes, written with an exponent or not (exp), is within a float64's
// range: without an exponent, only 309 digits or more exceed it. Any
// other number is parsed to know (strconv.ParseFloat's range error is
// "Number is too large"). The grammar check and the strict walk skip
// parsing through it.
func withinFloat64(n int, exp bool) bool { return !exp && n <= 308 }
