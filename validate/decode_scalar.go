package validate

import (
	"strconv"
	"strings"
	"unsafe"

	"github.com/fxhq/fx/internal/jsonscan"
)

// The one pass's scalars: strings (into the arena, or the caller's room)
// and numbers (a plain integer read by plainInt and kept within intRange,
// any other number parsed and judged by the leaf check, checkNumber).

// fillString reads the string at pos into the string at at (see the
// strings paragraph of decode.go).
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
