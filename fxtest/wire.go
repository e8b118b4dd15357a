package fxtest

import (
	"bytes"
	"errors"
	"strconv"
)

// The response parser of Do. The bytes come from fasthttp's own response
// writer (fx.App.TestRaw), so the parser reads only what that writer can
// produce: interim 1xx heads, then one final head with either a
// Content-Length or "Transfer-Encoding: chunked" (a streamed body), or
// neither (a body that runs to the end of the connection). It finds the
// status and the body in place and leaves the headers to Response.Header,
// parsed on first use. Before, Do read the response with
// fasthttp.Response.Read, which copied every header into a ResponseHeader
// and the body into a pooled buffer: a third of what Do cost.

// parseResponse finds the final response in raw: its head (the status line
// and headers, ending in CRLF CRLF), its status code and its body. A
// chunked body is decoded in place, inside raw after the head. The body is
// empty for a response to HEAD (skipBody) and for 1xx, 204 and 304
// statuses, as fasthttp reads them.
func parseResponse(raw []byte, skipBody bool) (head, body []byte, status int, err error) {
	for interim := 0; ; interim++ {
		end := bytes.Index(raw, crlfcrlf)
		if end < 0 {
			return nil, nil, 0, errors.New("the response head does not end (no CRLF CRLF)")
		}
		head, raw = raw[:end+4:end+4], raw[end+4:]
		if status, err = parseStatus(head); err != nil {
			return nil, nil, 0, err
		}
		if status >= 200 || status == 101 {
			break
		}
		if interim >= maxInterim {
			return nil, nil, 0, errors.New("too many interim (1xx) responses")
		}
	}
	if skipBody || status < 200 || status == 204 || status == 304 {
		return head, raw[:0:0], status, nil
	}
	chunked, length, err := framing(head)
	switch {
	case err != nil:
		return nil, nil, 0, err
	case chunked:
		body, err = dechunk(raw)
		return head, body, status, err
	case length >= 0:
		if len(raw) < length {
			return nil, nil, 0, errors.New("the body is shorter than its Content-Length " + strconv.Itoa(length))
		}
		return head, raw[:length:length], status, nil
	}
	return head, raw[:len(raw):len(raw)], status, nil
}

// maxInterim bounds the 1xx heads skipped before the final one (fasthttp's
// client allows as many).
const maxInterim = 10

var crlfcrlf = []byte("\r\n\r\n")

// parseStatus reads the status code of the status line opening head
// ("HTTP/1.1 200 OK").
func parseStatus(head []byte) (int, error) {
	line := head[:bytes.IndexByte(head, '\n')+1]
	if len(line) < len("HTTP/1.1 200\r\n") || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, errors.New("the status line " + strconv.Quote(string(line)) + " is not HTTP/1.x")
	}
	code := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return 0, errors.New("the status line " + strconv.Quote(string(line)) + " has no status code")
		}
		code = code*10 + int(c-'0')
	}
	return code, nil
}

// framing reads how the body after head is delimited: chunked, or
// Content-Length bytes (-1 when neither header is present).
func framing(head []byte) (chunked bool, length int, err error) {
	length = -1
	rest := head[bytes.IndexByte(head, '\n')+1:]
	for len(rest) > 2 {
		i := bytes.IndexByte(rest, '\n')
		if i < 1 {
			break // the head ends in CRLF CRLF: not reached
		}
		line := rest[:i-1] // without CRLF
		rest = rest[i+1:]
		if c := line[0] | 0x20; c != 'c' && c != 't' {
			continue // neither Content-Length nor Transfer-Encoding
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, perr := strconv.Atoi(string(value))
			if perr != nil || n < 0 {
				return false, 0, errors.New("bad Content-Length " + strconv.Quote(string(value)))
			}
			length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		}
	}
	return chunked, length, nil
}

// dechunk decodes the chunked body b in place (the decoded bytes are never
// longer than the encoded ones, and each chunk moves towards the start) and
// returns the decoded body. Chunk extensions and trailers are skipped.
func dechunk(b []byte) ([]byte, error) {
	n := 0 // decoded bytes, at b[:n]
	rest := b
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 1 || rest[i-1] != '\r' {
			return nil, errors.New("a chunk size line does not end in CRLF")
		}
		sizeText := rest[:i-1]
		if semi := bytes.IndexByte(sizeText, ';'); semi >= 0 {
			sizeText = sizeText[:semi]
		}
		size, err := strconv.ParseUint(string(bytes.TrimSpace(sizeText)), 16, 31)
		if err != nil {
			return nil, errors.New("bad chunk size " + strconv.Quote(string(sizeText)))
		}
		rest = rest[i+1:]
		if size == 0 {
			// Trailers, if any, then CRLF: nothing the body needs.
			return b[:n:n], nil
		}
		if uint64(len(rest)) < size+2 || rest[size] != '\r' || rest[size+1] != '\n' {
			return nil, errors.New("a chunk is shorter than its size or does not end in CRLF")
		}
		n += copy(b[n:], rest[:size])
		rest = rest[size+2:]
	}
}
