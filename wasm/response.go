package wasm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

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

// parseResponse validates data as exactly one WasmResponse JSON object (see
// ABI.md) and fills r. It reuses r's header slice.
func parseResponse(data []byte, r *response) error {
	r.status, r.headers, r.body = 0, r.headers[:0], nil
	if len(data) == 0 {
		return errors.New("empty response")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("response is not a JSON object")
	}
	var seenStatus, seenHeaders, seenBody, seenBody64 bool
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("invalid JSON: %w", err)
		}
		key, _ := tok.(string)
		switch key {
		case "status":
			if seenStatus {
				return errors.New(`duplicate field "status"`)
			}
			seenStatus = true
			tok, err := dec.Token()
			if err != nil {
				return fmt.Errorf("invalid JSON: %w", err)
			}
			n, ok := tok.(json.Number)
			if !ok {
				return fmt.Errorf(`"status" is %s, not an integer`, describeToken(tok))
			}
			st, err := strconv.Atoi(string(n))
			if err != nil || st < 200 || st > 599 {
				return fmt.Errorf(`"status" %s is not an integer in 200..599`, n)
			}
			r.status = st
		case "headers":
			if seenHeaders {
				return errors.New(`duplicate field "headers"`)
			}
			seenHeaders = true
			if err := parseHeaders(dec, r); err != nil {
				return err
			}
		case "body", "bodyBase64":
			if seenBody || seenBody64 {
				return errors.New(`more than one of "body" and "bodyBase64"`)
			}
			tok, err := dec.Token()
			if err != nil {
				return fmt.Errorf("invalid JSON: %w", err)
			}
			s, ok := tok.(string)
			if !ok {
				return fmt.Errorf("%q is %s, not a string", key, describeToken(tok))
			}
			if key == "body" {
				seenBody = true
				r.body = []byte(s)
			} else {
				seenBody64 = true
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					return fmt.Errorf(`"bodyBase64" is not standard base64: %w`, err)
				}
				r.body = b
			}
		default:
			return fmt.Errorf("unknown field %q", key)
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return errors.New("invalid JSON: unterminated object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the response object")
	}
	if !seenStatus {
		return errors.New(`missing field "status"`)
	}
	return nil
}

// parseHeaders reads the "headers" object: name → string or array of
// strings.
func parseHeaders(dec *json.Decoder, r *response) error {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New(`"headers" is not an object`)
	}
	start := len(r.headers)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("invalid JSON: %w", err)
		}
		name := tok.(string) // object keys are always strings
		if !validHeaderName(name) {
			return fmt.Errorf("header name %q is not an HTTP token", name)
		}
		if refusedHeaders[strings.ToLower(name)] {
			return fmt.Errorf("header %q may not be set by a guest", name)
		}
		for _, h := range r.headers[start:] {
			if strings.EqualFold(h.name, name) {
				return fmt.Errorf("duplicate header %q (use an array of values)", name)
			}
		}
		tok, err = dec.Token()
		if err != nil {
			return fmt.Errorf("invalid JSON: %w", err)
		}
		switch v := tok.(type) {
		case string:
			if err := r.addHeader(name, v, true); err != nil {
				return err
			}
		case json.Delim:
			if v != '[' {
				return fmt.Errorf("header %q is an object, not a string or array of strings", name)
			}
			first := true
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return fmt.Errorf("invalid JSON: %w", err)
				}
				s, ok := tok.(string)
				if !ok {
					return fmt.Errorf("header %q has a value that is %s, not a string", name, describeToken(tok))
				}
				if err := r.addHeader(name, s, first); err != nil {
					return err
				}
				first = false
			}
			if _, err := dec.Token(); err != nil { // ']'
				return fmt.Errorf("invalid JSON: %w", err)
			}
			if first {
				return fmt.Errorf("header %q has an empty array", name)
			}
		default:
			return fmt.Errorf("header %q is %s, not a string or array of strings", name, describeToken(tok))
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return fmt.Errorf("invalid JSON: %w", err)
	}
	return nil
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
// (by middleware) unless the guest sets the same name.
func (r *response) write(resp *fasthttp.Response) {
	resp.SetStatusCode(r.status)
	for _, h := range r.headers {
		if h.first {
			resp.Header.Set(h.name, h.value)
		} else {
			resp.Header.Add(h.name, h.value)
		}
	}
	resp.SetBody(r.body)
}

func describeToken(tok any) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	}
	return "invalid"
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
