package validate

import (
	"encoding/binary"
	"unsafe"

	"github.com/fxhq/fx/internal/jsonscan"
)

// The one pass's objects: a key matched to its field exactly (the plan's
// keys, else the description's exact names) or ignoring case as go-json
// matches it (tdesc.fold), a duplicate key found by its field's bit, and
// a field met again under a folded key merged by go-json.

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
