package fx

import (
	"bytes"
	"strings"
)

// negotiateEncoding picks the coding for a response from the request's
// Accept-Encoding field values (RFC 9110 section 12.5.3), among order (the
// server's preference). No allocation.
//
//   - Each element is a coding with an optional q-value (0 to 1, at most
//     three decimals); q=0 means "not acceptable". An element whose q-value
//     does not parse is ignored, as are codings fx does not produce and
//     parameters other than q. Codings are case-insensitive; x-gzip is
//     gzip. Several Accept-Encoding fields form one list; the first
//     element naming a coding counts.
//   - "*" gives its q-value to every coding not named.
//   - The coding with the highest q-value above 0 wins; between equal
//     q-values, the first in order.
//   - identity (no coding) is chosen when nothing is acceptable (no
//     Accept-Encoding at all, an empty one, "*;q=0", "identity"), or when
//     the client gives identity (by name, or through "*") a higher q-value
//     than the best coding: "gzip;q=0.5, identity" is sent uncompressed.
//     A client that refuses identity and every coding still gets identity:
//     a representation it may be able to use beats a 406.
func negotiateEncoding(values [][]byte, order []contentCoding) contentCoding {
	var q [numCodings]int // 0 = not named, else q-value (thousandths) + 1
	star, identity := 0, 0
	for _, v := range values {
		for len(v) > 0 {
			var elem []byte
			elem, v, _ = bytes.Cut(v, []byte{','})
			name, qv, ok := parseCodingElement(elem)
			if !ok {
				continue
			}
			switch {
			case name == "*":
				if star == 0 {
					star = qv + 1
				}
			case strings.EqualFold(name, "identity"):
				if identity == 0 {
					identity = qv + 1
				}
			default:
				c, known := codingNamed(name)
				if !known && strings.EqualFold(name, "x-gzip") {
					c, known = codingGzip, true
				}
				if known && q[c] == 0 {
					q[c] = qv + 1
				}
			}
		}
	}
	best, bestQ := codingIdentity, 0
	for _, c := range order {
		v := q[c]
		if v == 0 {
			v = star
		}
		if v-1 > bestQ {
			best, bestQ = c, v-1
		}
	}
	if best == codingIdentity {
		return best
	}
	if identity == 0 {
		identity = star
	}
	if identity-1 > bestQ {
		return codingIdentity
	}
	return best
}

// parseCodingElement splits one Accept-Encoding element into its coding and
// q-value in thousandths (1000 when absent). ok is false for an empty
// element or one whose q-value is malformed.
func parseCodingElement(elem []byte) (name string, q int, ok bool) {
	params := []byte(nil)
	if i := bytes.IndexByte(elem, ';'); i >= 0 {
		elem, params = elem[:i], elem[i+1:]
	}
	elem = bytes.TrimSpace(elem)
	if len(elem) == 0 {
		return "", 0, false
	}
	q = 1000
	for len(params) > 0 {
		var p []byte
		p, params, _ = bytes.Cut(params, []byte{';'})
		p = bytes.TrimSpace(p)
		if len(p) < 2 || p[0]|0x20 != 'q' || p[1] != '=' {
			continue // another parameter: ignored
		}
		if q, ok = parseQValue(p[2:]); !ok {
			return "", 0, false
		}
	}
	return b2s(elem), q, true
}

// parseQValue parses an RFC 9110 qvalue: "0" or "1", optionally followed by
// "." and up to three digits (only zeros after a 1), in thousandths.
func parseQValue(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 5 || (b[0] != '0' && b[0] != '1') {
		return 0, false
	}
	q := int(b[0]-'0') * 1000
	if len(b) == 1 {
		return q, true
	}
	if b[1] != '.' {
		return 0, false
	}
	scale := 100
	for _, d := range b[2:] {
		if d < '0' || d > '9' || (q == 1000 && d != '0') {
			return 0, false
		}
		q += int(d-'0') * scale
		scale /= 10
	}
	return q, true
}
