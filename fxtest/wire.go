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
	var chunked bool
	var length, n int
	for interim := 0; ; interim++ {
		if status, err = parseStatus(raw); err != nil {
			return nil, nil, 0, err
		}
		if n, chunked, length, err = readHead(raw); err != nil {
			return nil, nil, 0, err
		}
		head, raw = raw[:n:n], raw[n:]
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
	switch {
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

// readHead reads the head opening b, in one pass over its lines: its
// length (up to and with the empty line ending it) and how the body after
// it is delimited: chunked, or Content-Length bytes (-1 when neither header
// is present).
func readHead(b []byte) (n int, chunked bool, length int, err error) {
	length = -1
	n = bytes.IndexByte(b, '\n') + 1 // past the status line, read by parseStatus
	for {
		i := bytes.IndexByte(b[n:], '\n')
		if i < 0 {
			return 0, false, 0, errors.New("the response head does not end (no empty line)")
		}
		line := b[n : n+i]
		n += i + 1
		if len(line) == 0 || line[len(line)-1] != '\r' {
			return 0, false, 0, errors.New("a header line does not end in CRLF")
		}
		line = line[:len(line)-1]
		if len(line) == 0 {
			return n, chunked, length, nil
		}
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
			v, perr := strconv.Atoi(string(value))
			if perr != nil || v < 0 {
				return 0, false, 0, errors.New("bad Content-Length " + strconv.Quote(string(value)))
			}
			length = v
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		}
	}
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
