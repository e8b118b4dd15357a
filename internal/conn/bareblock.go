package conn

import (
	"bytes"
	"errors"
)

// A head ended by a bare LF. fasthttp v1.77 takes a bare LF as a line end
// (framing.go), but ends a header block at a blank line made of a bare LF
// ("GET / HTTP/1.1\nHost: x\n\n"), or at a CRLF blank line after a header
// line ended by a bare LF, only once a CRLF CRLF has arrived too: until
// then it keeps reading, so a client that sent such a head and waits for
// its answer waits for the read timeout, then gets 408 (raw fasthttp: the
// same wait, then a plain 400).
//
// The connection answers it at once instead. When a read that begins a
// request (a connection's first read, or the first after a response)
// returns exactly one such head, with nothing after its blank line and no
// CRLF CRLF anywhere, the next read, which is fasthttp asking for the rest
// of that head, fails at once with ErrBareLFHead; the server's
// ErrorHandler (fx: transportError) answers 400 FX_BAD_REQUEST with
// BareLFHeadMessage and the connection is closed. The status is raw
// fasthttp's, without the wait. A head that fasthttp would still end
// (more bytes after the blank line, a CRLF CRLF in the same read) is left
// to it, and so is one split over several reads (it waits for the read
// timeout, as before). Bytes that only look like such a head (a body
// read at a request's start that itself begins with a request line and
// ends with a bare-LF blank line) would be refused the same way; a
// legitimate client's body does not fall so.
//
// Cost: on a read that begins a request, two or three byte compares at
// its end (BenchmarkBareLFHead "crlf": 2-14 ns on a 2-core VM shared with
// other jobs); the head is scanned only when it ends with a bare-LF blank
// line ("bare": 120-200 ns, once, for a request that is then refused).
// Nothing is allocated or kept but a flag. BenchmarkServedRead measures
// the served connection's reads per keep-alive request: medians of six
// interleaved runs, 267 ns with this check against 367 ns with the
// request-line record it replaced (which copied every byte read).

// ErrBareLFHead is the read error of a connection whose request head ends
// with a blank line made of a bare LF and nothing after it (see above).
var ErrBareLFHead = errors.New("conn: the request head ends with a bare-LF blank line and no CRLF CRLF")

// BareLFHeadMessage is the message of the envelope answering
// ErrBareLFHead. It never quotes the request.
const BareLFHeadMessage = "The request head ends with a blank line made of a bare LF; end it with CRLF CRLF"

var crlfcrlf = []byte("\r\n\r\n")

// bareLFHead reports whether b, what a read that begins a request
// returned, is one whole request head that fasthttp cannot end (see
// above): a request line ending with " HTTP/1.x", header lines holding a
// colon, and a blank line that is a bare LF, or a CRLF after a header
// line ended by a bare LF, at the very end of b, with no CRLF CRLF in b.
func bareLFHead(b []byte) bool {
	n := len(b)
	switch {
	case n < 2 || b[n-1] != '\n':
		return false
	case b[n-2] == '\n': // "...\n\n"
	case n >= 4 && b[n-2] == '\r' && b[n-3] == '\n' && b[n-4] != '\r': // "...x\n\r\n"
	default:
		return false // the usual case: "\r\n\r\n", or a body, at the end
	}
	if bytes.Contains(b, crlfcrlf) {
		return false
	}
	i := bytes.IndexByte(b, '\n')
	if !requestLine(bytes.TrimSuffix(b[:i], []byte{'\r'})) {
		return false
	}
	rest := b[i+1:]
	if rest[0] == '\r' {
		return false // a CRLF right after the request line ends an empty block: fasthttp ends it
	}
	for len(rest) > 0 {
		j := bytes.IndexByte(rest, '\n') // found: b ends with an LF
		line := rest[:j]
		if len(line) == 0 || (len(line) == 1 && line[0] == '\r') {
			return j+1 == len(rest) // the blank line, and nothing after it
		}
		if bytes.IndexByte(line, ':') <= 0 {
			return false // not a header line: fasthttp refuses it itself, at once
		}
		rest = rest[j+1:]
	}
	return false
}

// requestLine reports whether line looks like a request line: a method,
// a target without spaces and "HTTP/1.0" or "HTTP/1.1", one space apart.
func requestLine(line []byte) bool {
	const proto = len(" HTTP/1.x")
	if len(line) < len("M / HTTP/1.1") || !bytes.HasPrefix(line[len(line)-proto:], []byte(" HTTP/1.")) {
		return false
	}
	v := line[len(line)-1]
	sp := bytes.IndexByte(line, ' ')
	return (v == '0' || v == '1') && sp > 0 && sp == bytes.LastIndexByte(line[:len(line)-proto], ' ')
}
