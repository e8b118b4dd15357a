// Package jsonscan is the one JSON scanner of fx. It holds the RFC 8259
// grammar of the tokens (white space, strings, numbers, the literals), the
// decoding of string escapes, and Cursor, which walks text already known
// to be well formed. The strict body reader (validate.CheckJSON and
// DecodeJSON), the validators' byte walkers, the adapters' bounded pre-passes and the
// WASM response parser are built on it, so a fix to how a string, an
// escape or a number is read lands in all of them at once.
//
// The token functions take the input and an offset and return the offset
// after the token, or the offset of the fault and a Fault saying what is
// wrong: they never allocate and never build an error value, so each
// caller words its own errors (the body reader's messages are part of
// fx's contract; the WASM parser's go to a log). Nesting (and its depth
// limit) belongs to the callers: only they know what they build.
package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// Fault says why a token is not well formed.
type Fault uint8

const (
	None       Fault = iota // well formed
	End                     // the input ends inside the token; the offset is len(input)
	Control                 // a control character (below U+0020) inside a string
	BadEscape               // a backslash followed by a byte that starts no escape (offset: that byte)
	BadHex                  // "\u" not followed by four hex digits (offset: the first that is not one)
	BadUTF8                 // invalid UTF-8 inside a string (only when String is strict)
	NoDigit                 // a number with no digit where its integer part starts
	NoFraction              // a number's '.' with no digit after it
	NoExponent              // a number's 'e' or 'E' with no digit in the exponent
	BadWord                 // a literal that is not the word expected (offset: its first byte)
)

// plain marks the bytes a string holds as they are: printable ASCII but
// the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const (
	lsb8 = 0x0101010101010101
	msb8 = 0x8080808080808080
)

// special8 marks (its high bit set) the bytes of the little-endian word x
// that plain does not mark: a control character, '"', '\\' or a byte of
// a multi-byte sequence. Borrows only reach upwards, so the lowest marked
// byte is exact (a byte above it may be marked wrongly).
func special8(x uint64) uint64 {
	q, b := x^('"'*lsb8), x^('\\'*lsb8)
	return ((x-0x20*lsb8)&^x | (q-lsb8)&^q | (b-lsb8)&^b | x) & msb8
}

// Space returns the offset of the first byte at or after i that is not
// JSON white space (space, tab, LF, CR), or len(d). Cost: one comparison
// when d[i] is above the space character (the common case: a body without
// white space between its tokens), four per white-space byte.
func Space(d []byte, i int) int {
	for i < len(d) && d[i] <= ' ' && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// String reads the string whose opening quote is at d[i] and returns the
// offset just after its closing quote. verbatim reports that its content
// d[i+1:end-1] is its value as it stands (no escape and, when not strict,
// no invalid UTF-8); otherwise Unescape gives the value. strict rejects
// invalid UTF-8 (BadUTF8) where a lax read accepts it for Unescape to
// replace. On a fault, end is its offset. Cost: one pass (plain text
// eight bytes at a time), no allocation.
func String(d []byte, i int, strict bool) (end int, verbatim bool, f Fault) {
	verbatim = true
	i++
	for {
		// eight bytes at a time while eight remain, then one at a time
		for {
			if i+8 > len(d) {
				for i < len(d) && plain[d[i]] {
					i++
				}
				break
			}
			if m := special8(binary.LittleEndian.Uint64(d[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(d) {
			return i, false, End
		}
		switch c := d[i]; {
		case c == '"':
			return i + 1, verbatim, None
		case c == '\\':
			verbatim = false
			i++
			if i >= len(d) {
				return i, false, End
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				i++
				for n := 0; n < 4; n++ {
					if i >= len(d) {
						return i, false, End
					}
					if hexVal(d[i]) < 0 {
						return i, false, BadHex
					}
					i++
				}
			default:
				return i, false, BadEscape
			}
		case c < 0x20:
			return i, false, Control
		default: // the first byte of a multi-byte sequence
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				if strict {
					return i, false, BadUTF8
				}
				verbatim = false
			}
			i += size
		}
	}
}

// Number reads the number starting at d[i] (a '-' or a digit) and returns
// the offset after it and whether it has an exponent. On a fault (NoDigit,
// NoFraction, NoExponent), end is the offset where a digit was wanted.
func Number(d []byte, i int) (end int, exp bool, f Fault) {
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = digits(d, i+1)
	default:
		return i, false, NoDigit
	}
	if i < len(d) && d[i] == '.' {
		if i++; i >= len(d) || d[i] < '0' || d[i] > '9' {
			return i, false, NoFraction
		}
		i = digits(d, i+1)
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		if i++; i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return i, true, NoExponent
		}
		return digits(d, i+1), true, None
	}
	return i, false, None
}

func digits(d []byte, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}

// Literal reads word ("true", "false" or "null") at d[i] and returns the
// offset after it. A different word is BadWord at i; input that ends
// inside the word is End at len(d).
func Literal(d []byte, i int, word string) (end int, f Fault) {
	for k := 0; k < len(word); k++ {
		switch {
		case i+k >= len(d):
			return len(d), End
		case d[i+k] != word[k]:
			return i, BadWord
		}
	}
	return i + len(word), None
}

// IsNull reports whether d is the JSON null alone, JSON white space aside
// ("\fnull" is not null but malformed, as the strict grammar reads it).
// Cost: one comparison for a body that opens with anything but white space
// or 'n' (an object, an array, a string: the common case), no allocation.
func IsNull(d []byte) bool {
	if len(d) > 0 && d[0] > ' ' && d[0] != 'n' {
		return false
	}
	i := Space(d, 0)
	return len(d) >= i+4 && string(d[i:i+4]) == "null" && Space(d, i+4) == len(d)
}

// hexVal is the value of a hex digit, or -1.
func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

func hex4(b []byte) rune {
	return hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3])
}

// Unescape appends the value of a string's content s (the bytes between
// its quotes, accepted by String) to dst and returns it. As encoding/json
// does, each byte of invalid UTF-8 and each unpaired surrogate escape
// becomes U+FFFD. Cost: one pass; it allocates only to grow dst.
func Unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c < utf8.RuneSelf && c != '\\':
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf && s[j] != '\\' {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
		default: // '\\'
			dst, i = unescapeOne(dst, s, i+1)
		}
	}
	return dst
}

// unescapeOne appends the escape whose letter is at s[i] and returns the
// offset after it (and after the low half of a surrogate pair).
func unescapeOne(dst, s []byte, i int) ([]byte, int) {
	switch e := s[i]; e {
	case 'b':
		return append(dst, '\b'), i + 1
	case 'f':
		return append(dst, '\f'), i + 1
	case 'n':
		return append(dst, '\n'), i + 1
	case 'r':
		return append(dst, '\r'), i + 1
	case 't':
		return append(dst, '\t'), i + 1
	case 'u':
		r := hex4(s[i+1 : i+5])
		i += 5
		if utf16.IsSurrogate(r) {
			pair := utf8.RuneError
			if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
				pair = utf16.DecodeRune(r, hex4(s[i+2:i+6]))
			}
			if pair != utf8.RuneError {
				i += 6
			}
			r = pair
		}
		return utf8.AppendRune(dst, r), i
	default: // '"', '\\', '/'
		return append(dst, e), i + 1
	}
}
