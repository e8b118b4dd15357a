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
// Cost: one pass over the value; a bare key and a quoted key without
// escapes cost one allocation (the string), an escaped one two.
func ParseKey(v []byte) (string, bool) {
	if len(v) == 0 {
		return "", false
	}
	if v[0] != '"' {
		if len(v) > MaxKeyLength {
			return "", false
		}
		for _, ch := range v {
			if ch < 0x21 || ch > 0x7e || ch == '\\' {
				return "", false
			}
		}
		return string(v), true
	}
	if len(v) < 3 || v[len(v)-1] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	escaped := false
	n := 0 // unescaped length
	for i := 0; i < len(inner); i++ {
		ch := inner[i]
		switch {
		case ch < 0x20 || ch > 0x7e:
			return "", false
		case ch == '"':
			return "", false // an unescaped quote inside
		case ch == '\\':
			i++
			if i == len(inner) || (inner[i] != '"' && inner[i] != '\\') {
				return "", false
			}
			escaped = true
		}
		n++
	}
	if n > MaxKeyLength {
		return "", false
	}
	if !escaped {
		return string(inner), true
	}
	out := make([]byte, 0, n)
	for i := 0; i < len(inner); i++ {
		if inner[i] == '\\' {
			i++
		}
		out = append(out, inner[i])
	}
	return string(out), true
}
