package fx

import (
	"bytes"
	"encoding/binary"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"
	"unsafe"

	json "github.com/goccy/go-json"
)

// This file writes the error envelope
//
//	{"error":{"code":"...","message":"...","details":...}}
//
// Code and message are escaped here (no reflection, no allocation); details
// go through goccy/go-json into a pooled buffer, with encoding/json as the
// fallback when go-json fails or panics, and the envelope without details as
// the last resort. Whatever the input bytes, the output is valid JSON:
// control characters are escaped, invalid UTF-8 becomes U+FFFD and U+2028 /
// U+2029 are escaped so the body is also safe to embed in JavaScript.

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a quoted JSON string.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendJSONInner(dst, s)
	return append(dst, '"')
}

// appendJSONInner appends s escaped for use inside a JSON string. Runs of
// plain ASCII are found eight bytes at a time and copied in one append;
// a string with nothing to escape (the common case: codes, messages,
// field names) is checked a word at a time to its end (the last word
// overlapping the one before) and appended whole.
func appendJSONInner(dst []byte, s string) []byte {
	i := 0
	for i+8 <= len(s) && !needsEscape8(load8(s, i)) {
		i += 8
	}
	switch {
	case i == len(s):
		return append(dst, s...)
	case i+8 <= len(s): // the word at i has something to escape
	case len(s) >= 8:
		if !needsEscape8(load8(s, len(s)-8)) {
			return append(dst, s...)
		}
	default:
		for i < len(s) && plainJSON[s[i]] {
			i++
		}
		if i == len(s) {
			return append(dst, s...)
		}
	}
	return appendJSONEscaped(dst, s, i)
}

// plainJSON marks the bytes a JSON string holds as they are (printable
// ASCII but '"' and '\\').
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONEscaped is appendJSONInner for a string with something to
// escape at or after i (s[:i] is plain).
func appendJSONEscaped(dst []byte, s string, i int) []byte {
	start := 0
	for i < len(s) {
		for i+8 <= len(s) && !needsEscape8(load8(s, i)) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

const (
	lsb8 = 0x0101010101010101
	msb8 = 0x8080808080808080
)

// load8 reads s[i:i+8] as a little-endian word (one load on amd64/arm64).
func load8(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
}

// needsEscape8 reports whether any of the eight bytes in x is a control
// character, '"', '\\' or non-ASCII (which needs a UTF-8 check).
func needsEscape8(x uint64) bool {
	return (x-0x20*lsb8)&^x&msb8|zeroBytes8(x^('"'*lsb8))|zeroBytes8(x^('\\'*lsb8))|x&msb8 != 0
}

// zeroBytes8 is non-zero exactly when one of the eight bytes of v is zero
// (x^(c*lsb8) has a zero byte where x has a byte c).
func zeroBytes8(v uint64) uint64 { return (v - lsb8) &^ v & msb8 }

// hasZero8 reports whether one of the eight bytes of v is zero.
func hasZero8(v uint64) bool { return zeroBytes8(v) != 0 }

// AppendEnvelope appends the wire envelope of e to dst and returns the
// extended slice. It is the exact body the framework sends for e (with e's
// message as given: the production rewrite of FX_INTERNAL_ERROR messages
// happens in the error boundary, not here). If e.Details cannot be encoded
// the envelope is written without it.
//
// AppendEnvelope does not allocate when e.Details is nil and dst has room.
func AppendEnvelope(dst []byte, e *Error) []byte {
	dst, _ = appendEnvelope(dst, e.Code, e.Message, e.Details)
	return dst
}

var (
	envPrefix  = []byte(`{"error":{"code":`)
	envMessage = []byte(`,"message":`)
	envDetails = []byte(`,"details":`)
	envSuffix  = []byte(`}}`)
)

// appendEnvelope writes the envelope; a non-nil error reports that details
// could not be encoded by either encoder (the envelope is then written
// without them) or that go-json failed and encoding/json took over.
func appendEnvelope(dst []byte, code, message string, details any) ([]byte, error) {
	dst = append(dst, envPrefix...)
	dst = appendJSONString(dst, code)
	dst = append(dst, envMessage...)
	dst = appendJSONString(dst, message)
	var derr error
	if details != nil {
		mark := len(dst)
		dst = append(dst, envDetails...)
		before := len(dst)
		dst, derr = appendDetails(dst, details)
		enc := dst[before:]
		if isEmptyJSON(enc) {
			dst = dst[:mark]
		}
	}
	return append(dst, envSuffix...), derr
}

// isEmptyJSON reports whether an encoded details value is null or {}: the
// contract says details is present only when there are details.
func isEmptyJSON(b []byte) bool {
	return len(b) == 0 || string(b) == "null" || string(b) == "{}"
}

// detailsEncoder is a pooled go-json encoder writing into its own buffer.
type detailsEncoder struct {
	buf []byte
	enc *json.Encoder
}

func (d *detailsEncoder) Write(p []byte) (int, error) {
	d.buf = append(d.buf, p...)
	return len(p), nil
}

var detailsEncoders = sync.Pool{New: func() any {
	d := &detailsEncoder{}
	d.enc = json.NewEncoder(d)
	d.enc.SetEscapeHTML(false)
	return d
}}

// appendDetails encodes v with go-json; on error or panic it falls back to
// encoding/json. A non-nil error with bytes appended means the fallback
// succeeded; with nothing appended, both failed. The details of
// FX_VALIDATION_ERROR, the one kind a client's input produces on every
// failed request, are written here directly (the bytes go-json would
// write, without its reflection and its UTF-8 check of the output).
func appendDetails(dst []byte, v any) ([]byte, error) {
	if d, ok := v.(validationDetails); ok {
		return appendValidationDetails(dst, &d), nil
	}
	out, gerr := appendGoJSON(dst, v)
	if gerr == nil {
		return out, nil
	}
	b, serr := encodeStdJSON(v)
	if serr != nil {
		return dst, fmt.Errorf("fx: encoding error details: go-json: %v; encoding/json: %w", gerr, serr)
	}
	return append(dst, b...), fmt.Errorf("fx: go-json failed to encode error details, used encoding/json: %w", gerr)
}

// appendValidationDetails appends d as go-json encodes it:
// {"issues":[{"location":...,"path":[...],"message":...}],"truncated":true},
// truncated only when set, a nil slice as null.
func appendValidationDetails(dst []byte, d *validationDetails) []byte {
	dst = append(dst, `{"issues":`...)
	if d.Issues == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range d.Issues {
			is := &d.Issues[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"location":`...)
			dst = appendJSONString(dst, is.Location)
			dst = append(dst, `,"path":`...)
			if is.Path == nil {
				dst = append(dst, "null"...)
			} else {
				dst = append(dst, '[')
				for j, seg := range is.Path {
					if j > 0 {
						dst = append(dst, ',')
					}
					dst = appendJSONString(dst, seg)
				}
				dst = append(dst, ']')
			}
			dst = append(dst, `,"message":`...)
			dst = appendJSONString(dst, is.Message)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if d.Truncated {
		dst = append(dst, `,"truncated":true`...)
	}
	return append(dst, '}')
}

// appendGoJSON appends v encoded by a pooled go-json encoder.
func appendGoJSON(dst []byte, v any) (out []byte, err error) {
	d := detailsEncoders.Get().(*detailsEncoder)
	start := len(dst)
	d.buf = dst // the encoder appends straight onto dst: no copy
	defer func() {
		if r := recover(); r != nil {
			// A panicking encoder may hold broken state: drop it. dst's
			// first start bytes are intact whatever was appended.
			out, err = dst[:start], fmt.Errorf("go-json panicked: %s", formatValue(r))
		}
	}()
	err = d.enc.Encode(v)
	out, d.buf = d.buf, nil
	detailsEncoders.Put(d)
	if err != nil {
		return out[:start], err
	}
	if n := len(out); n > start && out[n-1] == '\n' {
		out = out[:n-1]
	}
	if !utf8.Valid(out[start:]) {
		// go-json escapes strings, but a MarshalJSON or RawMessage can
		// carry invalid UTF-8 through; let encoding/json redo it.
		return out[:start], errors.New("go-json produced invalid UTF-8")
	}
	return out, nil
}

// encodeStdJSON is the fallback encoder; it never lets a panic escape.
func encodeStdJSON(v any) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("encoding/json panicked: %s", formatValue(r))
		}
	}()
	var buf bytes.Buffer
	enc := stdjson.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
