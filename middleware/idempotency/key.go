package idempotency

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxKeyLength is the longest Idempotency-Key accepted, in bytes of its
// value (after unquoting). Stripe's limit; the IETF draft sets none.
const MaxKeyLength = 255

// ParseKey returns the key carried by one Idempotency-Key field value and
// whether it is well-formed. The IETF draft
// (draft-ietf-httpapi-idempotency-key-header) makes the field an RFC 8941
// sf-string, so a conforming client sends
//
//	Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"
//
// but most clients in the wild (Stripe's among them) send the bare value.
// Both are accepted and name the same key:
//
//   - quoted: '"', then 1 to MaxKeyLength characters of printable ASCII
//     (0x20-0x7E) where '"' and '\' are escaped as \" and \\, then '"'.
//     The key is the unescaped content.
//   - bare: 1 to MaxKeyLength bytes of visible ASCII (0x21-0x7E) that does
//     not start with '"' and contains no '\' (so it cannot be confused
//     with a quoted value). The key is the value as sent.
//
// Anything else (empty, too long, control bytes, spaces outside quotes,
// non-ASCII, a broken quoted string) is malformed. The result never
// contains a line feed or a NUL, which the store key relies on.
//
// Cost: two passes over the value and one allocation (the string). New
// itself parses into the store key without the extra allocation.
func ParseKey(v []byte) (string, bool) {
	b, ok := appendKey(nil, v)
	return string(b), ok
}

// The key's grammar, in one place: appendKey checks a value with these
// predicates and keyValuePattern is written from them, so that the document
// states exactly what the server accepts.

// bareByte reports whether ch may appear in a bare key: visible ASCII
// (0x21-0x7E) but '\'. A bare key does not start with '"' either
// (bareFirstByte).
func bareByte(ch byte) bool { return ch >= 0x21 && ch <= 0x7e && ch != '\\' }

// bareFirstByte reports whether ch may start a bare key.
func bareFirstByte(ch byte) bool { return bareByte(ch) && ch != '"' }

// quotedByte reports whether ch may appear unescaped inside a quoted key:
// printable ASCII (0x20-0x7E) but '"' and '\'.
func quotedByte(ch byte) bool { return ch >= 0x20 && ch <= 0x7e && ch != '"' && ch != '\\' }

// escapedByte reports whether ch may follow a '\' inside a quoted key.
func escapedByte(ch byte) bool { return ch == '"' || ch == '\\' }

// keyValuePattern is the regular expression (ECMA-262 and RE2 alike) that
// an Idempotency-Key field value matches exactly when ParseKey accepts it,
// and keyValueMaxLength the longest such value, in characters: a quoted
// key of MaxKeyLength escaped characters. New documents the header with
// both (pattern and maxLength); they are written from the predicates
// ParseKey checks, so the document and the server cannot disagree.
var keyValuePattern = keyPattern()

const keyValueMaxLength = 2 + 2*MaxKeyLength

// keyPattern writes keyValuePattern from the predicates: a bare key, or a
// quoted one of 1 to MaxKeyLength (possibly escaped) characters.
func keyPattern() string {
	n := strconv.Itoa(MaxKeyLength)
	return `^(?:` + byteClass(bareFirstByte) + byteClass(bareByte) + `{0,` + strconv.Itoa(MaxKeyLength-1) + `}` +
		`|"(?:` + byteClass(quotedByte) + `|\\` + byteClass(escapedByte) + `){1,` + n + `}")$`
}

// byteClass is the regular expression class of the ASCII bytes in, as
// ranges of \xHH escapes ("[\x21\x23-\x5b]").
func byteClass(in func(byte) bool) string {
	var b strings.Builder
	b.WriteByte('[')
	for lo := 0; lo < 0x80; lo++ {
		if !in(byte(lo)) {
			continue
		}
		hi := lo
		for hi+1 < 0x80 && in(byte(hi+1)) {
			hi++
		}
		fmt.Fprintf(&b, `\x%02x`, lo)
		if hi > lo {
			fmt.Fprintf(&b, `-\x%02x`, hi)
		}
		lo = hi
	}
	b.WriteByte(']')
	return b.String()
}

// appendKey appends the key v carries to dst (ParseKey's rule), or
// reports false.
func appendKey(dst, v []byte) ([]byte, bool) {
	if len(v) == 0 {
		return dst, false
	}
	if v[0] != '"' {
		if len(v) > MaxKeyLength || !bareFirstByte(v[0]) {
			return dst, false
		}
		for _, ch := range v[1:] {
			if !bareByte(ch) {
				return dst, false
			}
		}
		return append(dst, v...), true
	}
	if len(v) < 3 || v[len(v)-1] != '"' {
		return dst, false
	}
	inner := v[1 : len(v)-1]
	n := 0 // unescaped length
	for i := 0; i < len(inner); i++ {
		switch ch := inner[i]; {
		case ch == '\\':
			i++
			if i == len(inner) || !escapedByte(inner[i]) {
				return dst, false
			}
		case !quotedByte(ch): // a control byte, or an unescaped quote inside
			return dst, false
		}
		n++
	}
	if n > MaxKeyLength {
		return dst, false
	}
	for i := 0; i < len(inner); i++ {
		if inner[i] == '\\' {
			i++
		}
		dst = append(dst, inner[i])
	}
	return dst, true
}
