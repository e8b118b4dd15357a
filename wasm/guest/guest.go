package guest

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ABIVersion is the version of the host ABI this SDK implements.
const ABIVersion = 1

// Field is one header or path parameter: {name, value}. It is an array,
// not a struct, so literals such as Header{{"Content-Type", "text/plain"}}
// stay short (and go vet's composites check stays quiet).
type Field [2]string

// Name returns f[0].
func (f Field) Name() string { return f[0] }

// Value returns f[1].
func (f Field) Value() string { return f[1] }

// Header is an ordered list of header fields; a name may repeat. Names are
// compared case-insensitively.
type Header []Field

// Get returns the first value of name, or "". Cost: a linear scan.
func (h Header) Get(name string) string {
	for _, f := range h {
		if strings.EqualFold(f[0], name) {
			return f[1]
		}
	}
	return ""
}

// Values returns every value of name, in order (nil when absent).
func (h Header) Values(name string) []string {
	var vs []string
	for _, f := range h {
		if strings.EqualFold(f[0], name) {
			vs = append(vs, f[1])
		}
	}
	return vs
}

// Add appends a value for name.
func (h *Header) Add(name, value string) { *h = append(*h, Field{name, value}) }

// Set replaces every value of name with value.
func (h *Header) Set(name, value string) {
	out := (*h)[:0]
	for _, f := range *h {
		if !strings.EqualFold(f[0], name) {
			out = append(out, f)
		}
	}
	*h = append(out, Field{name, value})
}

// Request is one HTTP request as the host encodes it. Every field is a
// copy the handler may keep.
type Request struct {
	Method string
	Path   string // the decoded path the route matched, e.g. "/users/42"
	Query  string // the raw query string, without "?"
	Header Header // request headers as received (names as the server normalised them)
	Params Header // the route's path parameters, e.g. {"id", "42"}
	Body   []byte
}

// Param returns the path parameter name, or "".
func (r Request) Param(name string) string {
	for _, f := range r.Params {
		if f[0] == name {
			return f[1]
		}
	}
	return ""
}

// Response is what a handler answers. A zero Status means 200. Header may
// not hold hop-by-hop or length headers (Connection, Transfer-Encoding,
// Content-Length, ...) and values may not hold control characters: the host
// answers 502 if they do. Without a Content-Type (from the handler or from
// the host's middleware) the host sends "text/plain; charset=utf-8".
type Response struct {
	Status int
	Header Header
	Body   []byte
}

// Text returns a text/plain response.
func Text(status int, body string) Response {
	return Response{Status: status, Header: Header{{"Content-Type", "text/plain; charset=utf-8"}}, Body: []byte(body)}
}

// JSON returns an application/json response with an already encoded body.
// (Prefer hand-written or generated encoders to encoding/json inside a
// guest: its reflection costs ~220 µs per request there.)
func JSON(status int, body []byte) Response {
	return Response{Status: status, Header: Header{{"Content-Type", "application/json"}}, Body: body}
}

// handler is read by the wasip1 exports (exports_wasip1.go): in a native
// build nothing calls it, which is what lets guests be tested natively.
//
//lint:ignore U1000 used only when GOOS=wasip1
var handler func(Request) Response

// Handle registers the guest's handler. Call it from an init function: a
// -buildmode=c-shared guest runs package initialisers, never main.main.
func Handle(h func(Request) Response) { handler = h }

var errShort = errors.New("guest: truncated request")

// DecodeRequest decodes a request in the ABI's encoding (wasm/ABI.md). It
// allocates one string for all the text fields and one copy of the body.
func DecodeRequest(b []byte) (Request, error) {
	const preamble = 24
	if len(b) < preamble {
		return Request{}, errShort
	}
	u32 := func(i int) int { return int(binary.LittleEndian.Uint32(b[i:])) }
	ml, pl, ql, nh, np, bl := u32(0), u32(4), u32(8), u32(12), u32(16), u32(20)
	if bl < 0 || bl > len(b)-preamble { // negative: a u32 over 2³¹ where int has 32 bits
		return Request{}, errShort
	}
	text := string(b[preamble : len(b)-bl]) // one allocation for every string
	pos := 0
	take := func(n int) (string, bool) {
		if n < 0 || n > len(text)-pos {
			return "", false
		}
		s := text[pos : pos+n]
		pos += n
		return s, true
	}
	var r Request
	var ok1, ok2, ok3 bool
	r.Method, ok1 = take(ml)
	r.Path, ok2 = take(pl)
	r.Query, ok3 = take(ql)
	if !ok1 || !ok2 || !ok3 {
		return Request{}, errShort
	}
	pairs := func(n int) (Header, bool) {
		if n < 0 || n > len(text)/8+1 {
			return nil, false
		}
		h := make(Header, 0, n)
		for range n {
			if len(text)-pos < 8 {
				return nil, false
			}
			kl, vl := u32(preamble+pos), u32(preamble+pos+4)
			pos += 8
			k, ok1 := take(kl)
			v, ok2 := take(vl)
			if !ok1 || !ok2 {
				return nil, false
			}
			h = append(h, Field{k, v})
		}
		return h, true
	}
	var ok bool
	if r.Header, ok = pairs(nh); !ok {
		return Request{}, errShort
	}
	if r.Params, ok = pairs(np); !ok {
		return Request{}, errShort
	}
	if pos != len(text) {
		return Request{}, errors.New("guest: malformed request")
	}
	if bl > 0 {
		r.Body = append([]byte(nil), b[len(b)-bl:]...)
	}
	return r, nil
}

// AppendResponse appends r as a WasmResponse JSON document to dst: headers
// are grouped by name (case-insensitively, first spelling kept), a body
// that is valid UTF-8 goes in "body", any other in "bodyBase64". It uses
// no reflection.
func AppendResponse(dst []byte, r Response) []byte {
	status := r.Status
	if status == 0 {
		status = 200
	}
	dst = append(dst, `{"status":`...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	if len(r.Header) > 0 {
		dst = append(dst, `,"headers":{`...)
		for i, f := range r.Header {
			if seenBefore(r.Header[:i], f[0]) {
				continue
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, f[0])
			dst = append(dst, ':')
			n := 0
			for _, g := range r.Header[i:] {
				if strings.EqualFold(g[0], f[0]) {
					n++
				}
			}
			if n == 1 {
				dst = appendString(dst, f[1])
				continue
			}
			dst = append(dst, '[')
			j := 0
			for _, g := range r.Header[i:] {
				if strings.EqualFold(g[0], f[0]) {
					if j > 0 {
						dst = append(dst, ',')
					}
					dst = appendString(dst, g[1])
					j++
				}
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	}
	if len(r.Body) > 0 {
		if utf8.Valid(r.Body) {
			dst = append(dst, `,"body":`...)
			dst = appendBody(dst, r.Body)
		} else {
			dst = append(dst, `,"bodyBase64":"`...)
			dst = base64.StdEncoding.AppendEncode(dst, r.Body)
			dst = append(dst, '"')
		}
	}
	return append(dst, '}')
}

func seenBefore(h Header, name string) bool {
	for _, f := range h {
		if strings.EqualFold(f[0], name) {
			return true
		}
	}
	return false
}

// appendBody is appendString for a body that is valid UTF-8. It copies
// eight bytes at a time while none needs escaping: byte loops are slow in
// Go's wasm code (~25x native), so this keeps a 1 KiB body to a few µs.
func appendBody(dst, b []byte) []byte {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	dst = append(dst, '"')
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		ctl := (x - lo*0x20) & ^x & hi // some byte < 0x20
		q := x ^ (lo * '"')
		bs := x ^ (lo * '\\')
		if ctl|((q-lo)&^q&hi)|((bs-lo)&^bs&hi) != 0 {
			break
		}
		dst = append(dst, b[:8]...)
		b = b[8:]
	}
	return append(appendEscaped(dst, b), '"')
}

// AppendJSONString appends s to dst as a quoted JSON string, escaping
// quotes, backslashes and control characters; invalid UTF-8 is copied as
// is (the host replaces it with U+FFFD). Use it to build JSON bodies
// without encoding/json, whose reflection is slow inside a guest.
func AppendJSONString(dst []byte, s string) []byte { return appendString(dst, s) }

// appendString appends s as a JSON string, escaping quotes, backslashes and
// control characters (invalid UTF-8 is left to the host, which replaces it).
func appendString(dst []byte, s string) []byte {
	return append(appendEscaped(append(dst, '"'), s), '"')
}

func appendEscaped[T string | []byte](dst []byte, s T) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	return append(dst, s[start:]...)
}
