package wasm

import (
	"fmt"

	"github.com/valyala/fasthttp"
)

// maxResponseHeaders bounds the number of header values in a WasmResponse.
const maxResponseHeaders = 100

// response is a validated WasmResponse, ready to be written.
type response struct {
	status  int
	headers []headerField // grouped by name, in document order
	body    []byte
}

type headerField struct {
	name, value string
	first       bool // the first value of its name: Set, not Add
}

// refusedHeaders are the response headers a guest may not set: hop-by-hop
// headers (RFC 9110 §7.6.1) and the framing headers the server computes.
var refusedHeaders = map[string]bool{
	"connection":          true,
	"keep-alive":          true,
	"proxy-connection":    true,
	"proxy-authenticate":  true,
	"proxy-authorization": true,
	"te":                  true,
	"trailer":             true,
	"transfer-encoding":   true,
	"upgrade":             true,
	"content-length":      true,
}

func (r *response) addHeader(name, value string, first bool) error {
	if len(r.headers) >= maxResponseHeaders {
		return fmt.Errorf("more than %d header values", maxResponseHeaders)
	}
	if !validHeaderValue(value) {
		return fmt.Errorf("header %q has a value with a control character (CR, LF, NUL, ...)", name)
	}
	r.headers = append(r.headers, headerField{name: name, value: value, first: first})
	return nil
}

// write applies a validated response to resp, keeping headers set earlier
// (by middleware) unless the guest sets the same name. fasthttp keeps one
// value of Content-Type, Content-Encoding, Server and Date (the last), and
// adds every Set-Cookie to the cookies already set (see ABI.md section 4).
func (r *response) write(resp *fasthttp.Response) {
	resp.SetStatusCode(r.status)
	for _, h := range r.headers {
		if h.first {
			resp.Header.Set(h.name, h.value)
		} else {
			resp.Header.Add(h.name, h.value)
		}
	}
	resp.SetBodyRaw(r.body) // r.body is a fresh slice per response: no copy needed
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar[s[i]] {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s is free of control characters other
// than horizontal tab (so of CR, LF and NUL in particular) and of DEL.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; (b < 0x20 && b != '\t') || b == 0x7f {
			return false
		}
	}
	return true
}

var isTokenChar = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()
