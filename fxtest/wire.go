package fxtest

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
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

// ReadResponses reads raw, the bytes a server wrote on one connection
// (read off a socket opened to Serve, or what App.TestRaw returned), as
// the responses in it, in order, with the parser Do uses; each Response's
// headers are checked to be well-formed as well. A Response reports its
// Assert failures to t (nil where no Assert method is called). Interim 1xx heads are skipped; a body with neither
// Content-Length nor chunked encoding runs to the end of raw. A response
// to HEAD cannot be framed without its request: keep HEAD out of what raw
// answers. It returns the responses before the first malformed one and an
// error saying what is wrong with that one.
//
// Cost: one copy of raw, shared by the Responses, and each one's header
// map (which Do builds only on first use).
func ReadResponses(t testing.TB, raw []byte) ([]*Response, error) {
	var rs []*Response
	for rest := bytes.Clone(raw); len(rest) > 0; {
		head, body, next, status, err := nextResponse(rest, false)
		if err == nil {
			var h http.Header
			if h, err = parseHeader(head); err == nil {
				rs = append(rs, &Response{t: t, Status: status, Body: body, head: head, header: h})
				rest = next
				continue
			}
		}
		return rs, fmt.Errorf("response %d: %v", len(rs)+1, err)
	}
	return rs, nil
}

// parseResponse finds the final response in raw: its head (the status line
// and headers, ending in CRLF CRLF), its status code and its body. A
// chunked body is decoded in place, inside raw after the head. The body is
// empty for a response to HEAD (skipBody) and for 1xx, 204 and 304
// statuses, as fasthttp reads them.
func parseResponse(raw []byte, skipBody bool) (head, body []byte, status int, err error) {
	head, body, _, status, err = nextResponse(raw, skipBody)
	return head, body, status, err
}

// nextResponse is parseResponse that also returns what follows the
// response in raw (the next response on a connection; empty after a body
// that runs to the end).
func nextResponse(raw []byte, skipBody bool) (head, body, rest []byte, status int, err error) {
	var chunked bool
	var length, n int
	for interim := 0; ; interim++ {
		if status, err = parseStatus(raw); err != nil {
			return nil, nil, nil, 0, err
		}
		if n, chunked, length, err = readHead(raw); err != nil {
			return nil, nil, nil, 0, err
		}
		head, raw = raw[:n:n], raw[n:]
		if status >= 200 || status == 101 {
			break
		}
		if interim >= maxInterim {
			return nil, nil, nil, 0, errors.New("too many interim (1xx) responses")
		}
	}
	if skipBody || status < 200 || status == 204 || status == 304 {
		return head, raw[:0:0], raw, status, nil
	}
	switch {
	case chunked:
		body, rest, err = dechunk(raw)
		return head, body, rest, status, err
	case length >= 0:
		if len(raw) < length {
			return nil, nil, nil, 0, errors.New("the body is shorter than its Content-Length " + strconv.Itoa(length))
		}
		return head, raw[:length:length], raw[length:], status, nil
	}
	return head, raw[:len(raw):len(raw)], raw[len(raw):], status, nil
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
// returns the decoded body and what follows the body's last line.
// Chunk extensions and trailers are skipped; trailers cut short end at the
// end of b.
func dechunk(b []byte) (body, rest []byte, err error) {
	n := 0 // decoded bytes, at b[:n]
	rest = b
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 1 || rest[i-1] != '\r' {
			return nil, nil, errors.New("a chunk size line does not end in CRLF")
		}
		sizeText := rest[:i-1]
		if semi := bytes.IndexByte(sizeText, ';'); semi >= 0 {
			sizeText = sizeText[:semi]
		}
		size, err := strconv.ParseUint(string(bytes.TrimSpace(sizeText)), 16, 31)
		if err != nil {
			return nil, nil, errors.New("bad chunk size " + strconv.Quote(string(sizeText)))
		}
		rest = rest[i+1:]
		if size == 0 {
			// Trailers, if any, then CRLF: nothing the body needs.
			for {
				i := bytes.IndexByte(rest, '\n')
				if i < 0 {
					return b[:n:n], rest[len(rest):], nil
				}
				line := rest[:i]
				rest = rest[i+1:]
				if len(line) == 1 && line[0] == '\r' {
					return b[:n:n], rest, nil
				}
			}
		}
		if uint64(len(rest)) < size+2 || rest[size] != '\r' || rest[size+1] != '\n' {
			return nil, nil, errors.New("a chunk is shorter than its size or does not end in CRLF")
		}
		n += copy(b[n:], rest[:size])
		rest = rest[size+2:]
	}
}
