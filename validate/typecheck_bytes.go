package validate

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/fxhq/fx/internal/jsonscan"
)

// The strict walk, the type check over bytes: on the strict
// reader's tokens and state (strict.go), it checks the grammar
// (duplicate keys, UTF-8, number range, depth) and whether every value
// fits its Go type, building nothing; a value the type does not
// constrain (an unknown key, an interface) is read by the strict reader
// itself. It runs in one of two modes, by its issue collector (the
// parser's list):
//
//   - none (nil): the yes/no guard of the one-pass decoder (decode.go),
//     stopping at the first misfit (errMisfit), without allocating;
//   - a collector: the type issues of a body CheckJSON accepted, every
//     one, in the order the tree's check (typecheck.go) reports them
//     (members in sorted key order, elements by index), up to the
//     collector's limit.
//
// Both modes answer through the leaf checks of typecheck.go.

// errMisfit ends the walk: a value that does not fit its type, a fault
// the walk leaves CheckJSON to word, or (listing) a full issue list.
var errMisfit = errors.New("validate: the body does not fit the type")

// typeIssues reports into st every type issue of body, which CheckJSON
// accepted, against d: the issues checkType reports over the body's
// tree, in its order, stopping at st's limit; nothing is decoded but the
// values an issue quotes (a number, a time) and the keys of the objects
// on the way (to sort them).
func typeIssues(d *tdesc, body []byte, st *state) {
	p := getParser(body, false)
	p.list = st
	p.skipSpace()
	p.fit(d.typed())
	putParser(p)
}

// typed is d as the walk carries it: nil for a type that takes any value
// (only the grammar is checked below it).
func (d *tdesc) typed() *tdesc {
	if d == nil || d.kind == tAny {
		return nil
	}
	return d
}

// fit reads the value at pos (white space skipped) as d describes it; a
// misfit stops the walk, or, listing (p.list), is reported there and the
// walk goes on past the value.
func (p *parser) fit(d *tdesc) error {
	if d == nil {
		_, err := p.value()
		return err
	}
	if p.pos >= len(p.data) {
		return errMisfit
	}
	switch c := p.data[p.pos]; {
	case c == 'n': // the root's or a member's that takes it (fitMember): the zero value
		return p.word("null")
	case c == '"':
		if d.kind != tString && d.kind != tText && d.kind != tBytes && d.kind != tTime {
			return p.misfit(d)
		}
		end, verbatim, f := jsonscan.String(p.data, p.pos, true)
		if f != jsonscan.None {
			return errMisfit
		}
		s := p.pos + 1
		p.pos = end
		if (d.kind == tBytes || d.kind == tTime) && !fitText(d, p.data[s:end-1], !verbatim, p.list) {
			return p.refused()
		}
		return nil
	case c == '-' || (c >= '0' && c <= '9'):
		if d.kind != tInt && d.kind != tUint && d.kind != tFloat {
			return p.misfit(d)
		}
		return p.fitNumber(d)
	case c == '{':
		if d.kind != tStruct && d.kind != tMap {
			return p.misfit(d)
		}
		if p.list != nil {
			return p.listObject(d)
		}
		return p.fitObject(d)
	case c == '[':
		if d.kind != tSlice {
			return p.misfit(d)
		}
		return p.fitArray(d.elem.typed(), d.elemNull)
	case c == 't' && d.kind == tBool:
		return p.word("true")
	case c == 'f' && d.kind == tBool:
		return p.word("false")
	}
	return p.misfit(d)
}

// fitMember is fit for a member of an object or an array: null fits only
// where the member takes it (null: takesNull).
func (p *parser) fitMember(d *tdesc, null bool) error {
	if !null && p.pos < len(p.data) && p.data[p.pos] == 'n' && !p.holes {
		return p.misfit(d)
	}
	return p.fit(d)
}

// refused is the walk's answer to a value a leaf check refused: stop, or,
// listing, go on (the check reported it).
func (p *parser) refused() error {
	if p.list == nil {
		return errMisfit
	}
	return nil
}

// misfit is a value at pos of another JSON kind than d takes: the walk
// stops, or, listing, the mismatch is reported and the value read past.
func (p *parser) misfit(d *tdesc) error {
	if p.list == nil {
		return errMisfit
	}
	c := p.data[p.pos]
	if _, err := p.value(); err != nil {
		return err
	}
	mismatch(d, kindAt(c), p.list)
	return nil
}

// word reads the literal word at pos.
func (p *parser) word(w string) error {
	end, f := jsonscan.Literal(p.data, p.pos, w)
	if f != jsonscan.None {
		return errMisfit
	}
	p.pos = end
	return nil
}

// fitText checks the string content raw (between its quotes) against d
// (a time, base64) by the leaf check, checkText. Cost: the string is
// decoded (one allocation).
func fitText(d *tdesc, raw []byte, esc bool, st *state) bool {
	s := string(raw)
	if esc {
		s = string(jsonscan.Unescape(nil, raw))
	}
	return checkText(d, s, st)
}

// fitNumber reads the number at pos. A float64 takes a number its range
// holds unparsed (withinFloat64); an integer kind takes a plain integer
// (plainInt) by its value; any other number is parsed. The value is then
// the leaf check's, checkNumber.
func (p *parser) fitNumber(d *tdesc) error {
	start := p.pos
	end, exp, f := jsonscan.Number(p.data, start)
	if f != jsonscan.None {
		return errMisfit
	}
	p.pos = end
	tok := p.data[start:end]
	if d.kind == tFloat && d.bits == 64 && withinFloat64(len(tok), exp) {
		return nil
	}
	n, plain := plainInt(tok)
	v := float64(n)
	if !plain || d.kind == tFloat {
		var err error
		if v, err = strconv.ParseFloat(unsafe.String(&tok[0], len(tok)), 64); err != nil {
			return errMisfit // CheckJSON: "Number is too large"
		}
	}
	if !checkNumber(d, v, p.list) {
		return p.refused()
	}
	return nil
}

// fitArray reads the array at pos, each element as elem describes it
// (null: an element takes null); listing, it is listArray.
func (p *parser) fitArray(elem *tdesc, null bool) error {
	if p.list != nil {
		return p.listArray(elem, null)
	}
	if empty, err := p.open(']'); empty || err != nil {
		return err
	}
	for {
		if err := p.fitMember(elem, null); err != nil {
			return err
		}
		if more, err := p.next(']'); !more {
			p.fitDepth--
			return err
		}
	}
}

// listArray is fitArray listing issues: each element under its index in
// the path, until the list is full. (The index and the list are kept out
// of fitArray's loop: the guard runs it on every typed body.)
func (p *parser) listArray(elem *tdesc, null bool) error {
	if empty, err := p.open(']'); empty || err != nil {
		return err
	}
	st := p.list
	for i := 0; ; i++ {
		if st.full() {
			return errMisfit
		}
		st.push(strconv.Itoa(i))
		err := p.fitMember(elem, null)
		st.pop()
		if err != nil {
			return err
		}
		if more, err := p.next(']'); !more {
			p.fitDepth--
			return err
		}
	}
}

// open enters the array or object at pos (one more level towards
// MaxDepth) and the white space after its opener; empty reports that
// closer follows, read too (the level is left again).
func (p *parser) open(closer byte) (empty bool, err error) {
	if len(p.stack)+p.fitDepth >= MaxDepth {
		return false, errMisfit
	}
	p.fitDepth++
	p.pos++
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == closer {
		p.pos++
		p.fitDepth--
		return true, nil
	}
	return false, nil
}

// next reads the ',' or closer after an element or a member, and the
// white space around it: more reports a ','.
func (p *parser) next(closer byte) (more bool, err error) {
	p.skipSpace()
	if p.pos < len(p.data) {
		c := p.data[p.pos]
		p.pos++
		if c == ',' {
			p.skipSpace()
			return true, nil
		}
		if c == closer {
			return false, nil
		}
	}
	return false, errMisfit
}

// fitObject reads the object at pos as the struct or map d. A key that
// names a struct field exactly (no escape) is checked for a duplicate by
// the field's bit, without a copy; every other key (a map's, unknown,
// matched ignoring case, escaped) goes through addKey, as CheckJSON's
// keys do, under a frame taken at the first such key.
func (p *parser) fitObject(d *tdesc) error {
	start := p.pos
	if empty, err := p.open('}'); empty || err != nil {
		return err
	}
	framed := false
	var seen uint64 // the struct fields met, by index (the first 64)
	for {
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return errMisfit
		}
		at := p.pos
		end, verbatim, f := jsonscan.String(p.data, at, true)
		if f != jsonscan.None {
			return errMisfit
		}
		p.pos = end
		key, i := p.data[at+1:end-1], -1
		if verbatim && d.kind == tStruct {
			i = d.exact(bytesKey(key))
		}
		if i < 0 || i >= 64 {
			var err error
			if key, err = p.slowKey(start, at, key, !verbatim, &framed); err != nil {
				return err
			}
			if d.kind == tStruct {
				i = d.exact(bytesKey(key))
			}
		}
		var vd *tdesc
		null := true // an unknown key's value: anything
		switch {
		case d.kind == tMap:
			vd, null = d.elem, d.elemNull
		case i >= 0 && i < 64:
			if seen&(1<<i) != 0 {
				return errMisfit // a duplicate
			}
			seen |= 1 << i
			vd, null = d.fields[i].d, d.fields[i].null
		default:
			if f := d.field(bytesKey(key)); f != nil {
				vd, null = f.d, f.null
			} else if d.closed {
				return errMisfit // an unknown key of a closed struct
			}
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return errMisfit
		}
		p.pos++
		p.skipSpace()
		if err := p.fitMember(vd.typed(), null); err != nil {
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

// listObject is fitObject listing issues, for a body whose
// grammar CheckJSON checked: the members that have a type (every member
// of a map, the fields of a struct, matched as go-json matches them) are
// visited in sorted key order, as checkType visits a tree's map, until the
// list is full. Cost: the keys are copied and sorted.
func (p *parser) listObject(d *tdesc) error {
	type member struct {
		key  string
		d    *tdesc
		null bool
		at   int
	}
	var ms []member
	c := cursor{Cursor: jsonscan.Cursor{Data: p.data, Pos: p.pos}}
	c.members(func(key []byte, at int) {
		fd, null := d.elem, d.elemNull
		if d.kind == tStruct {
			f := d.field(bytesKey(key))
			if f == nil {
				if d.closed {
					ms = append(ms, member{string(key), nil, false, -1}) // reported, not read
				}
				return
			}
			fd, null = f.d, f.null
		}
		ms = append(ms, member{string(key), fd, null, at})
	})
	end := c.Pos
	slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	st := p.list
	p.fitDepth++
	for _, m := range ms {
		if st.full() {
			return errMisfit
		}
		st.push(m.key)
		var err error
		if m.at < 0 {
			st.add(unknownKey)
		} else {
			p.pos = m.at
			err = p.fitMember(m.d.typed(), m.null)
		}
		st.pop()
		if err != nil {
			return err
		}
	}
	p.fitDepth--
	p.pos = end
	return nil
}

// slowKey is the key of an object member that the struct's field bits do
// not cover (a map's key, an unknown one, one matched ignoring case, an
// escaped one, a field beyond the 64th), for the strict walk and the
// one-pass decoder alike: it is checked for a duplicate by addKey, as
// CheckJSON's keys are, under a frame taken for the object (at start) at
// its first such key; the unescaped key is returned.
func (p *parser) slowKey(start, at int, raw []byte, esc bool, framed *bool) ([]byte, error) {
	if !*framed { // this level is now counted by its frame
		p.fitDepth--
		if err := p.push(frame{obj: true, start: start, keysStart: len(p.offs), keysBytes: len(p.keys)}); err != nil {
			return nil, errMisfit
		}
		*framed = true
	}
	if p.addKey(at, raw, esc, nil) != nil {
		return nil, errMisfit // a duplicate
	}
	fr := &p.stack[len(p.stack)-1]
	return p.keys[fr.ks:fr.ke], nil
}

// closeObject leaves the object whose '}' was read: its frame, when it
// took one, else its level of fitDepth.
func (p *parser) closeObject(framed bool) {
	if framed {
		p.popObject()
	} else {
		p.fitDepth--
	}
}
