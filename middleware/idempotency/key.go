package idempotency

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

// appendKey appends the key v carries to dst (ParseKey's rule), or
// reports false.
func appendKey(dst, v []byte) ([]byte, bool) {
	if len(v) == 0 {
		return dst, false
	}
	if v[0] != '"' {
		if len(v) > MaxKeyLength {
			return dst, false
		}
		for _, ch := range v {
			if ch < 0x21 || ch > 0x7e || ch == '\\' {
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
		case ch < 0x20 || ch > 0x7e, ch == '"': // a control byte, or an unescaped quote inside
			return dst, false
		case ch == '\\':
			i++
			if i == len(inner) || (inner[i] != '"' && inner[i] != '\\') {
				return dst, false
			}
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
