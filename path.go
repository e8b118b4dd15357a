package fx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/valyala/fasthttp"
)

// One path: the router, c.Path() and c.Param see the same path.
//
// fasthttp/router matches URI.PathOriginal, the path exactly as the client
// sent it, while c.Path() is fasthttp's URI.Path: percent-decoded, with
// "//", "/./" and "/../" removed. Left alone the two disagree, and
// GET /admin/x/%2e%2e/%2e%2e/public ran the /admin/*rest handler while a
// prefix guard on c.Path() saw /public: a 403 bypassed into a 200. So the
// router is handed the normalised path itself (URI.SetPathBytes(URI.Path())),
// and c.Path(), the route that runs and c.Param all read one string. A
// catch-all therefore never holds a ".." segment: normalisation has removed
// them all before matching.
//
// Three encodings have no single meaning and are refused with 400
// FX_BAD_REQUEST before routing, before any middleware and handler
// (refusePath):
//
//   - "%2F" (an encoded '/'). Decoded, it would split a segment in two:
//     /files/a%2Fb would route as /files/a/b, which is not what a client that
//     escaped the slash meant. Kept as a literal '/' inside one segment, it
//     would make c.Path() ambiguous (/a%2Fb and /a/b would both read /a/b),
//     and a guard on c.Path() could no longer tell what was routed. Refusing
//     is the only choice in which router, c.Param and c.Path() agree and say
//     what the client sent. (Apache refuses it by default too.)
//   - '\' and "%5C". Windows (and so fasthttp's normalisation on Windows,
//     and many file servers and proxies) treat '\' as a separator; a ..\ in a
//     parameter would be a parent segment to them and not to the router.
//   - a decoded path that still holds a percent escape (double encoding:
//     %252e decodes to %2e). A second decoder downstream (a proxy, a file
//     server, a handler calling url.PathUnescape) would read a different path
//     than the one routed.
//
// Cost: a plain path (one that decoding and normalisation leave unchanged,
// the common case) costs one pass over the two paths fasthttp has already
// computed, comparing them and looking for '\' eight bytes at a time
// (plainPath): a few ns on a 15-byte path (BenchmarkPathStep), no
// allocation. Any other path costs one more normalisation pass into the
// URI's own buffers (no allocation either; BenchmarkEncodedPath).

// plainPath reports whether the step passes a request path unchanged: its
// original form orig and its normalised form norm are equal and hold no
// '\'. It is bytes.Equal and bytes.IndexByte(orig, '\\') in one pass,
// eight bytes at a time: on the short paths of requests, two calls cost
// more than the work.
func plainPath(orig, norm []byte) bool {
	if len(orig) != len(norm) {
		return false
	}
	n := len(orig)
	if n < 8 {
		if n < 4 {
			for i := range n {
				if orig[i] != norm[i] || orig[i] == '\\' {
					return false
				}
			}
			return true
		}
		// The first four bytes and the last four (they may overlap).
		x := uint64(binary.LittleEndian.Uint32(orig))<<32 | uint64(binary.LittleEndian.Uint32(orig[n-4:]))
		y := uint64(binary.LittleEndian.Uint32(norm))<<32 | uint64(binary.LittleEndian.Uint32(norm[n-4:]))
		return x == y && !hasZero8(x^('\\'*lsb8))
	}
	// Whole words, then the last eight bytes (overlapping the last word).
	for i := 0; ; i += 8 {
		if i > n-8 {
			i = n - 8
		}
		x := binary.LittleEndian.Uint64(orig[i:])
		if x != binary.LittleEndian.Uint64(norm[i:]) || hasZero8(x^('\\'*lsb8)) {
			return false
		}
		if i == n-8 {
			return true
		}
	}
}

// routeNormalised makes u's original path (what the router matches) the
// normalised path (what c.Path() returns), or reports false when the path
// is one of the refused encodings.
func routeNormalised(u *fasthttp.URI) bool {
	orig := u.PathOriginal()
	if len(orig) == 1 && orig[0] == '*' {
		return true // OPTIONS *: the whole server, not a path
	}
	if hasEncodedSlash(orig) {
		return false
	}
	norm := u.Path()
	if bytes.IndexByte(norm, '\\') >= 0 || hasEscape(norm) {
		return false
	}
	// SetPathBytes copies norm into the original path before it normalises
	// it again into the buffer norm points into, so passing norm is safe.
	u.SetPathBytes(norm)
	// A normalised path without escapes normalises to itself; if fasthttp
	// ever disagreed, routing on it would reopen the gap: refuse instead.
	return bytes.Equal(u.PathOriginal(), u.Path())
}

// hasEncodedSlash reports whether p holds "%2F" or "%2f".
func hasEncodedSlash(p []byte) bool {
	return hasPercent(p, func(hi, lo byte) bool { return hi == '2' && lo|0x20 == 'f' })
}

// hasEscape reports whether p holds a valid percent escape ('%' and two hex
// digits), which a decoded path can only hold if it was encoded twice.
func hasEscape(p []byte) bool {
	return hasPercent(p, func(hi, lo byte) bool { return isHex(hi) && isHex(lo) })
}

// hasPercent reports whether p holds a '%' followed by two bytes that
// escape accepts. Cost: one IndexByte scan; escape runs once per '%'.
func hasPercent(p []byte, escape func(hi, lo byte) bool) bool {
	for i := bytes.IndexByte(p, '%'); i >= 0 && i+2 < len(p); {
		if escape(p[i+1], p[i+2]) {
			return true
		}
		j := bytes.IndexByte(p[i+1:], '%')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
}

// translatePath turns fx syntax (":id", final "*rest") into fasthttp/router
// syntax ("{id}", "{rest:*}") and lists the parameter names.
func translatePath(p string) (string, []string, error) {
	if p == "" || p[0] != '/' {
		return "", nil, errors.New("the path must begin with '/'")
	}
	if strings.ContainsAny(p, "{}?#") {
		return "", nil, errors.New("the path must not contain '{', '}', '?' or '#'")
	}
	segs := strings.Split(p, "/")
	var params []string
	for i, s := range segs {
		if s == "" {
			continue
		}
		switch s[0] {
		case ':', '*':
			name := s[1:]
			if name == "" || strings.ContainsAny(name, ":*") {
				return "", nil, fmt.Errorf("parameter %q needs a plain name", s)
			}
			for _, prev := range params {
				if prev == name {
					return "", nil, fmt.Errorf("parameter %q appears twice", name)
				}
			}
			params = append(params, name)
			if s[0] == ':' {
				segs[i] = "{" + name + "}"
			} else {
				if i != len(segs)-1 {
					return "", nil, fmt.Errorf("catch-all %q must be the last segment", s)
				}
				segs[i] = "{" + name + ":*}"
			}
		default:
			if strings.ContainsAny(s, ":*") {
				return "", nil, fmt.Errorf("segment %q: ':' and '*' may only start a segment", s)
			}
		}
	}
	return strings.Join(segs, "/"), params, nil
}
