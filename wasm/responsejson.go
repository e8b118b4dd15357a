package wasm

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fxhq/fx/internal/jsonscan"
)

// parseResponse validates data as exactly one WasmResponse JSON object (see
// ABI.md) and fills r, reusing r's header slice. It is a strict,
// single-pass parser for this one schema: no reflection, and no allocation
// beyond the header strings and the body. Its tokens (white space,
// strings, numbers) are read by fx's one JSON scanner, internal/jsonscan,
// the one the strict request-body reader uses.
func parseResponse(data []byte, r *response) error {
	r.status, r.headers, r.body = 0, r.headers[:0], nil
	if len(data) == 0 {
		return errors.New("empty response")
	}
	p := parser{jsonscan.Cursor{Data: data}}
	p.SkipSpace()
	if p.Peek() != '{' {
		return errors.New("response is not a JSON object")
	}
	p.Pos++
	var seenStatus, seenHeaders, seenBody bool
	for first := true; ; first = false {
		p.SkipSpace()
		if p.Peek() == '}' && first {
			p.Pos++
			break
		}
		if !first {
			switch p.Peek() {
			case '}':
				p.Pos++
			case ',':
				p.Pos++
				p.SkipSpace()
			default:
				return p.syntax("',' or '}' after a field")
			}
			if data[p.Pos-1] == '}' {
				break
			}
		}
		key, err := p.str()
		if err != nil {
			return err
		}
		if err := p.colon(); err != nil {
			return err
		}
		switch key {
		case "status":
			if seenStatus {
				return errors.New(`duplicate field "status"`)
			}
			seenStatus = true
			if c := p.Peek(); c != '-' && (c < '0' || c > '9') {
				return fmt.Errorf(`"status" is %s, not an integer`, p.kind())
			}
			num, err := p.number()
			if err != nil {
				return err
			}
			st, err := strconv.Atoi(num)
			if err != nil || st < 200 || st > 599 {
				return fmt.Errorf(`"status" %s is not an integer in 200..599`, num)
			}
			r.status = st
		case "headers":
			if seenHeaders {
				return errors.New(`duplicate field "headers"`)
			}
			seenHeaders = true
			if err := p.headers(r); err != nil {
				return err
			}
		case "body", "bodyBase64":
			if seenBody {
				return errors.New(`more than one of "body" and "bodyBase64"`)
			}
			seenBody = true
			if p.Peek() != '"' {
				return fmt.Errorf("%q is %s, not a string", key, p.kind())
			}
			if key == "body" {
				b, err := p.bytes()
				if err != nil {
					return err
				}
				r.body = b
			} else {
				s, _, err := p.raw()
				if err != nil {
					return err
				}
				b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
				n, err := base64.StdEncoding.Decode(b, s)
				if err != nil {
					return fmt.Errorf(`"bodyBase64" is not standard base64: %w`, err)
				}
				r.body = b[:n]
			}
		default:
			return fmt.Errorf("unknown field %q", key)
		}
	}
	p.SkipSpace()
	if p.Pos != len(data) {
		return errors.New("trailing data after the response object")
	}
	if !seenStatus {
		return errors.New(`missing field "status"`)
	}
	return nil
}

// headers reads the "headers" object: name → string or array of strings.
func (p *parser) headers(r *response) error {
	if p.Peek() != '{' {
		return fmt.Errorf(`"headers" is %s, not an object`, p.kind())
	}
	p.Pos++
	start := len(r.headers)
	for first := true; ; first = false {
		p.SkipSpace()
		if p.Peek() == '}' {
			if !first && p.Data[p.Pos-1] == ',' {
				return p.syntax("a header name")
			}
			p.Pos++
			return nil
		}
		if !first {
			if p.Peek() != ',' {
				return p.syntax("',' or '}' in \"headers\"")
			}
			p.Pos++
			p.SkipSpace()
		}
		name, err := p.str()
		if err != nil {
			return err
		}
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
		if err := p.colon(); err != nil {
			return err
		}
		switch p.Peek() {
		case '"':
			v, err := p.str()
			if err != nil {
				return err
			}
			if err := r.addHeader(name, v, true); err != nil {
				return err
			}
		case '[':
			p.Pos++
			n := 0
			for {
				p.SkipSpace()
				if p.Peek() == ']' && n == 0 {
					return fmt.Errorf("header %q has an empty array", name)
				}
				if n > 0 {
					if p.Peek() == ']' {
						p.Pos++
						break
					}
					if p.Peek() != ',' {
						return p.syntax("',' or ']' in a header array")
					}
					p.Pos++
					p.SkipSpace()
				}
				if p.Peek() != '"' {
					return fmt.Errorf("header %q has a value that is %s, not a string", name, p.kind())
				}
				v, err := p.str()
				if err != nil {
					return err
				}
				if err := r.addHeader(name, v, n == 0); err != nil {
					return err
				}
				n++
			}
		case '{':
			return fmt.Errorf("header %q is an object, not a string or array of strings", name)
		default:
			return fmt.Errorf("header %q is %s, not a string or array of strings", name, p.kind())
		}
	}
}

// parser reads one JSON document with the shared scanner: Peek, and
// SkipSpace for white space.
type parser struct{ jsonscan.Cursor }

func (p *parser) syntax(want string) error {
	if p.Pos >= len(p.Data) {
		return fmt.Errorf("invalid JSON: unexpected end, want %s", want)
	}
	return fmt.Errorf("invalid JSON at offset %d: want %s", p.Pos, want)
}

// kind names the JSON value starting at the cursor, for type errors.
func (p *parser) kind() string {
	switch c := p.Peek(); {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	}
	return "not a JSON value"
}

func (p *parser) colon() error {
	p.SkipSpace()
	if p.Peek() != ':' {
		return p.syntax("':'")
	}
	p.Pos++
	p.SkipSpace()
	return nil
}

// number scans a JSON number and returns its text.
func (p *parser) number() (string, error) {
	start := p.Pos
	end, _, f := jsonscan.Number(p.Data, start)
	p.Pos = end
	if f != jsonscan.None {
		return "", p.syntax("a digit")
	}
	return string(p.Data[start:end]), nil
}

// str scans a JSON string and returns its value.
func (p *parser) str() (string, error) {
	b, _, err := p.raw()
	return string(b), err
}

// bytes scans a JSON string and returns its value in a fresh slice.
func (p *parser) bytes() ([]byte, error) {
	b, fresh, err := p.raw()
	if err != nil || fresh {
		return b, err
	}
	return append([]byte(nil), b...), nil
}

// raw scans a JSON string and returns its value: a subslice of the input
// when it holds no escape and no invalid UTF-8 (fresh false), else a new
// slice. Invalid UTF-8 and lone surrogates become U+FFFD, as encoding/json
// does.
func (p *parser) raw() (b []byte, fresh bool, err error) {
	if p.Peek() != '"' {
		return nil, false, p.syntax("a string")
	}
	end, verbatim, f := jsonscan.String(p.Data, p.Pos, false)
	if f != jsonscan.None {
		p.Pos = end
		switch f {
		case jsonscan.Control:
			return nil, false, fmt.Errorf("invalid JSON at offset %d: control character in a string", end)
		case jsonscan.BadEscape:
			return nil, false, fmt.Errorf("invalid JSON at offset %d: bad escape", end)
		case jsonscan.BadHex:
			return nil, false, p.syntax("4 hex digits after \\u")
		}
		return nil, false, p.syntax("'\"' closing a string") // jsonscan.End
	}
	content := p.Data[p.Pos+1 : end-1]
	p.Pos = end
	if verbatim {
		return content, false, nil
	}
	return jsonscan.Unescape(make([]byte, 0, len(content)), content), true, nil
}
