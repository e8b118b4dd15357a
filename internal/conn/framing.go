package conn

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// Request framing. A request's end is decided by its framing headers; when
// a front proxy and the App could decide it differently, a client can hide
// a second request inside the first one's body (or the first one's body
// inside a second request): request smuggling. The proxy forwards one
// request, the App serves two, and the hidden one bypasses whatever the
// proxy checks, or is answered into another client's connection. RFC 9112
// lets a server refuse each ambiguous form; fx refuses them all with
//
//	HTTP/1.1 400 Bad Request
//	Connection: close
//	{"error":{"code":"FX_BAD_REQUEST","message":"..."}}
//
// and closes the connection, so nothing after the refused request is read:
//
//   - Content-Length and Transfer-Encoding together (RFC 9112 6.1). fasthttp
//     v1.77 reads such a request as chunked (or, with "identity", by its
//     Content-Length) and answers it before closing the connection; a proxy
//     that went by the other header disagrees on where it ended.
//   - Obsolete line folding, a header line starting with SP or HTAB (RFC
//     9112 5.2). fasthttp joins it to the previous line; a proxy that reads
//     it as a header of its own ("X: a\r\n Transfer-Encoding: chunked") sees
//     different framing.
//   - A bare LF (an LF without CR before it) anywhere in the header block
//     (RFC 9112 2.2). fasthttp accepts it as a line end, even as the blank
//     line ending the block; a proxy that only splits on CRLF sees one
//     request where fasthttp sees two, or a header fasthttp does not.
//   - A field name that is not a token (RFC 9110 5.1), which after
//     fasthttp v1.77's own checks means one with a space inside: "X A: a".
//     fasthttp keeps such a field under its spaced name; a proxy that
//     drops the space, or ends the name at it, reads a header fasthttp
//     does not ("X Transfer-Encoding: chunked").
//
// fasthttp v1.77 already refuses, with 400 and a closed connection, the
// other ambiguous forms: a Transfer-Encoding other than chunked (or
// identity), two Transfer-Encoding or two Content-Length fields (even equal
// ones), a Content-Length list, Transfer-Encoding on HTTP/1.0, a first
// header line starting with whitespace, whitespace between a field name
// and its colon (RFC 9112 5.1), any other non-token byte in a name. The
// root package's framing_test.go pins those too, against an App.
//
// The same hook refuses a Content-Length over the body limit before the
// body: fasthttp would otherwise answer "Expect: 100-continue" with an
// interim 100 Continue, inviting the client to send the body it is then
// refused for (413 FX_PAYLOAD_TOO_LARGE, RFC 9110 10.1.1).
//
// Mechanism. fasthttp has no setting for any of this and its HeaderReceived
// hook, which runs after the header is parsed and before the body is read
// or 100 Continue is sent, cannot return an error. So the hook marks a
// refused request by replacing its request-target with refusedTarget, a
// string with a control byte that fasthttp's URI parsing, which runs right
// after the hook, rejects: fasthttp then calls the Server's ErrorHandler
// (fx: transportError), which recognises the mark (MarkedFault) and
// answers with the envelope, and closes the connection without reading
// the body. The check
// works on RequestHeader.RawHeaders, the header block's wire bytes, which
// fasthttp always keeps (it is the only place where a fold or a bare LF is
// still visible). A Server whose HeaderReceived is replaced (Server())
// loses the guard.
//
// Cost: one pass over the header block (per line an IndexByte for its end,
// one for its colon and one for a space within the name, and a byte
// compare at its start), no allocation, nothing aliased beyond the call.
// BenchmarkFraming, with a typical 11-line, 550-byte header, on a
// 2-core machine heavily shared with other jobs: 260-330 ns for the guard
// against 1.4-1.8 us for fasthttp's own parsing of that header, so about a
// sixth of a cost every request already pays (the load inflates both).

// Fault is why the connection layer refused a request; FaultNone is none.
// Every fault is answered 400 FX_BAD_REQUEST except FaultTooLarge, 413
// FX_PAYLOAD_TOO_LARGE (the core maps them to its catalog), with Message
// as the envelope's message, and the connection is closed.
type Fault uint8

// The faults: FramingGuard's (MarkedFault reports them) and the
// request-line check's (CheckRequestLine).
const (
	FaultNone              Fault = iota
	FaultLengthAndEncoding       // Content-Length and Transfer-Encoding together
	FaultFolding                 // obsolete line folding
	FaultBareLF                  // a header line not ended by CRLF
	FaultTooLarge                // a Content-Length over the server's body limit
	FaultFieldName               // a field name that is not a token
	FaultBareLineEnd             // the request line not ended by CRLF (CheckRequestLine)
	FaultUnchecked               // the request line could not be checked (CheckRequestLine)
)

// faultMessages holds each fault's message, indexed by Fault.
var faultMessages = [...]string{
	FaultLengthAndEncoding: "The request has both Content-Length and Transfer-Encoding",
	FaultFolding:           "The request uses obsolete header line folding",
	FaultBareLF:            "The request has a header line not ended by CRLF",
	FaultTooLarge:          "The request body is larger than the server accepts",
	FaultFieldName:         "The request has a header field name that is not a token",
	FaultBareLineEnd:       "The request line is not ended by CRLF",
	FaultUnchecked:         "The request line could not be checked (a pipelined request behind a large body)",
}

// Message is the message the refusal's envelope carries ("" for
// FaultNone). It never quotes the request.
func (f Fault) Message() string {
	if int(f) < len(faultMessages) {
		return faultMessages[f]
	}
	return ""
}

// refusedTarget marks a refused request: a NUL then the fault. A request
// cannot carry it itself (fasthttp refuses a request line with a control
// byte before the hook runs).
func refusedTarget(f Fault) string { return string([]byte{0, byte(f)}) }

// FramingGuard returns srv's HeaderReceived hook (see above): a request
// it refuses reaches srv's ErrorHandler, where MarkedFault tells why. The
// body limit is srv's own MaxRequestBodySize, read per request, so that a
// limit changed through fx's App.Server() before Serve is the one
// enforced. Cost per request: BenchmarkFraming; no allocation.
func FramingGuard(srv *fasthttp.Server) func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
	return func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		f := framingFaultOf(h.RawHeaders())
		if f == FaultNone {
			limit := srv.MaxRequestBodySize
			if limit <= 0 {
				limit = fasthttp.DefaultMaxRequestBodySize
			}
			if h.ContentLength() > limit {
				f = FaultTooLarge
			}
		}
		if f != FaultNone {
			h.SetRequestURI(refusedTarget(f))
		}
		return fasthttp.RequestConfig{}
	}
}

// framingFaultOf reports the first framing fault of raw, a request's header
// block as received (after the request line, up to and including the
// blank line).
func framingFaultOf(raw []byte) Fault {
	var length, encoding bool
	for len(raw) > 0 {
		switch raw[0] {
		case ' ', '\t':
			return FaultFolding
		case 'c', 'C':
			length = length || hasFieldName(raw, "content-length:")
		case 't', 'T':
			encoding = encoding || hasFieldName(raw, "transfer-encoding:")
		}
		i := bytes.IndexByte(raw, '\n')
		if i < 0 {
			break // fasthttp ends every block with an LF; not reached
		}
		if i == 0 || raw[i-1] != '\r' {
			return FaultBareLF
		}
		if !tokenName(raw[:i]) {
			return FaultFieldName
		}
		raw = raw[i+1:]
	}
	if length && encoding {
		return FaultLengthAndEncoding
	}
	return FaultNone
}

// tokenName reports whether line (one header line, or the CR of the blank
// line ending the block) has a field name without whitespace. fasthttp has
// refused every other byte outside a token before the hook runs (pinned by
// TestFramingFieldNameBytes, which sends every byte value), so a space is
// the only one left to find.
func tokenName(line []byte) bool {
	colon := bytes.IndexByte(line, ':')
	if colon < 0 {
		return true // the blank line; fasthttp refuses a line without a colon
	}
	return bytes.IndexByte(line[:colon], ' ') < 0
}

// hasFieldName reports whether line starts with name (lower case, with its
// colon), ignoring ASCII case. Folding case with |0x20 is exact here:
// a field name holds only token bytes (fasthttp and tokenName have checked),
// and no token byte other than an upper-case letter maps onto a byte of
// name.
func hasFieldName(line []byte, name string) bool {
	if len(line) < len(name) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if line[i]|0x20 != name[i] {
			return false
		}
	}
	return true
}

// MarkedFault is the fault FramingGuard refused h's request for, or
// FaultNone for a request it let through: a server's ErrorHandler calls
// it to tell a refusal from fasthttp's own errors. Cost: a length check.
func MarkedFault(h *fasthttp.RequestHeader) Fault {
	uri := h.RequestURI()
	if len(uri) != 2 || uri[0] != 0 || uri[1] == 0 || int(uri[1]) >= len(faultMessages) {
		return FaultNone
	}
	return Fault(uri[1])
}

// The request line. fasthttp parses the request line before the hook runs
// and keeps only its parts (method, target, version): whether it ended
// with CRLF or with a bare LF is lost, and RequestHeader.RawHeaders starts
// after it. A bare LF there is the same ambiguity as in a header line (a
// peer that splits only on CRLF reads "GET / HTTP/1.1\nHost: x" as one
// line), so fx keeps its own record of what the connection read since the
// last request it checked (lineMirror, fed by the served connection's
// Read), finds the request in it (its line, then its header block, byte
// for byte) and refuses one whose line ended with a bare LF, or whose
// leading empty line did, with 400 FX_BAD_REQUEST and a closed connection
// (CheckRequestLine, called by fx's App.checkRequestLine before any
// routing).
//
// The record holds at most mirrorLimit(HeaderLimit) bytes. A request is
// found at the record's start (the usual case: one request per read, or
// one after a body of known length), or, after a chunked body, searched
// for by its header block. A request that cannot be found although bytes
// were dropped from a full record since the last one found (a pipelined
// request behind a large body in the same burst) is refused too: its line
// cannot be checked. One that cannot be found otherwise (not expected) is
// served.
//
// Cost per request: copying what the connection read into the record
// (its header block, and up to the limit of its body), and comparing the
// line and header block with the record's start: BenchmarkRequestLine.

// mirrorLimit is the most bytes a connection's record holds: a header
// block (at most headerLimit) and room for what follows it.
func mirrorLimit(headerLimit int) int { return 2 * headerLimit }

// mirrorKeep is the capacity a record keeps between requests; a larger
// buffer is released once the record is empty.
const mirrorKeep = 4 << 10

// lineMirror is a served connection's record of the bytes it read since
// the last request found in it. The zero value records nothing.
type lineMirror struct {
	buf   []byte
	limit int // 0: not recording
	// gap: bytes were read that the record had no room for, so a request
	// may be missing from it; afterGap: the record was empty when it
	// resumed, so what it holds now was read after the gap.
	gap, afterGap bool
}

// feed records p, what the connection just read.
func (m *lineMirror) feed(p []byte) {
	if m.limit == 0 {
		return
	}
	if len(m.buf) == 0 && m.gap {
		m.afterGap = true
	}
	if room := m.limit - len(m.buf); len(p) > room {
		p, m.gap = p[:room], true
	}
	m.buf = append(m.buf, p...)
}

// check finds req in the record, forgets the record up to the end of
// req's body, and returns FaultBareLineEnd when req's request line (or an
// empty line before it) ended with a bare LF. A request that cannot be
// found is FaultUnchecked when it may have been read into a gap of the
// record, and admitted otherwise.
func (m *lineMirror) check(req *fasthttp.Request) Fault {
	if m.limit == 0 {
		return FaultNone
	}
	h := &req.Header
	end, bare, ok := findRequest(m.buf, h.Method(), h.RequestURI(), h.Protocol(), h.RawHeaders())
	if !ok {
		f := FaultNone
		if m.gap {
			f = FaultUnchecked
		}
		m.gap, m.afterGap = false, false
		m.forget(len(m.buf))
		return f
	}
	if m.afterGap { // req was read after the gap: the gap is behind
		m.gap, m.afterGap = false, false
	}
	switch cl := h.ContentLength(); {
	case cl >= 0 && end+cl <= len(m.buf):
		end += cl
	case cl >= 0:
		end = len(m.buf) // the body ran into the gap
	default:
		// A chunked body takes at least its decoded length on the wire;
		// the chunk framing and whatever follows are kept, and the next
		// request is searched for.
		end = min(end+len(req.Body()), len(m.buf))
	}
	m.forget(end)
	if bare {
		return FaultBareLineEnd
	}
	return FaultNone
}

// forget drops the record's first n bytes, and its buffer when it is
// empty and large.
func (m *lineMirror) forget(n int) {
	rest := copy(m.buf, m.buf[n:])
	m.buf = m.buf[:rest]
	if rest == 0 && cap(m.buf) > mirrorKeep {
		m.buf = nil
	}
}

// findRequest finds the request with this line and header block in b: at
// its start (after empty lines), or else at the first place its header
// block follows its line. It returns the end of the header block and
// whether the line, or an empty line before it, ended with a bare LF.
func findRequest(b, method, uri, proto, raw []byte) (end int, bare, ok bool) {
	i := 0
	for i < len(b) && (b[i] == '\r' || b[i] == '\n') {
		if b[i] == '\n' {
			bare = true
			i++
		} else if i+1 < len(b) && b[i+1] == '\n' {
			i += 2
		} else {
			break
		}
	}
	if n, lineBare, ok := requestAt(b[i:], method, uri, proto, raw); ok {
		return i + n, bare || lineBare, true
	}
	if len(raw) == 0 {
		return 0, false, false
	}
	lineLen := len(method) + len(uri) + len(proto) + 2
	for from := 0; ; {
		j := bytes.Index(b[from:], raw)
		if j < 0 {
			return 0, false, false
		}
		j += from
		for _, eol := range [2]int{2, 1} { // CRLF, then bare LF
			if s := j - eol - lineLen; s >= 0 {
				if n, lineBare, ok := requestAt(b[s:], method, uri, proto, raw); ok {
					return s + n, lineBare, true
				}
			}
		}
		from = j + 1
	}
}

// requestAt reports whether b starts with the request line
// "method SP uri SP proto", ended by CRLF or a bare LF, followed by raw;
// n is the length of all of it.
func requestAt(b, method, uri, proto, raw []byte) (n int, bare, ok bool) {
	l := len(method) + len(uri) + len(proto) + 2
	if len(b) <= l || !bytes.HasPrefix(b, method) || b[len(method)] != ' ' ||
		!bytes.Equal(b[len(method)+1:len(method)+1+len(uri)], uri) ||
		b[l-len(proto)-1] != ' ' || !bytes.Equal(b[l-len(proto):l], proto) {
		return 0, false, false
	}
	switch {
	case b[l] == '\n':
		bare, l = true, l+1
	case b[l] == '\r' && l+1 < len(b) && b[l+1] == '\n':
		l += 2
	default:
		return 0, false, false
	}
	if !bytes.HasPrefix(b[l:], raw) {
		return 0, false, false
	}
	return l + len(raw), bare, true
}
