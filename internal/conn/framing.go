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
//   - A field name that is not a token (RFC 9110 5.1), which after
//     fasthttp v1.77's own checks means one with a space inside: "X A: a".
//     fasthttp keeps such a field under its spaced name; a proxy that
//     drops the space, or ends the name at it, reads a header fasthttp
//     does not ("X Transfer-Encoding: chunked").
//
// A bare LF (an LF without CR before it) ending the request line or a
// header line is accepted, as fasthttp and net/http accept it: HTTP/1.1's
// message syntax lets a recipient recognise a single LF as a line end
// (RFC 9112 2.2), and a message carrying one is not ambiguous to a
// recipient that follows it; a front proxy that keeps a bare LF inside a
// line it forwards breaks RFC 9110 5.5, which requires it to refuse the
// message or replace the LF with a space. fx refused it once, from a
// per-connection record of the bytes read, and that record refused
// legitimate pipelines, could be bypassed and fell out of step after
// chunked bodies; docs/security.md says more. fasthttp ends a header
// block at a blank line made of a bare LF only when a CRLF CRLF has
// arrived too; a head that ends with one and nothing after it is answered
// at once by the connection layer (bareblock.go), not left to the read
// timeout.
//
// fasthttp v1.77 already refuses, with 400 and a closed connection, the
// other ambiguous forms: a Transfer-Encoding other than chunked (or
// identity), two Transfer-Encoding or two Content-Length fields (even equal
// ones), a Content-Length list, Transfer-Encoding on HTTP/1.0, a first
// header line starting with whitespace, whitespace between a field name
// and its colon (RFC 9112 5.1), any other non-token byte in a name. The
// root package's server_test.go pins those too, against an App.
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
// fasthttp always keeps (it is the only place where a fold is still
// visible). A Server whose HeaderReceived is replaced (Server())
// loses the guard.
//
// Cost: one pass over the header block (per line an IndexByte for its end,
// one for its colon and one for a space within the name, and a byte
// compare at its start), no allocation, nothing aliased beyond the call.
// Nothing is kept per connection.
// BenchmarkFraming, with a typical 11-line, 550-byte header, on a
// 2-core machine heavily shared with other jobs: 260-330 ns for the guard
// against 1.4-1.8 us for fasthttp's own parsing of that header, so about a
// sixth of a cost every request already pays (the load inflates both).

// Fault is why the connection layer refused a request; FaultNone is none.
// Every fault is answered 400 FX_BAD_REQUEST except FaultTooLarge, 413
// FX_PAYLOAD_TOO_LARGE (the core maps them to its catalog), with Message
// as the envelope's message, and the connection is closed.
type Fault uint8

// The faults FramingGuard marks (MarkedFault reports them).
const (
	FaultNone              Fault = iota
	FaultLengthAndEncoding       // Content-Length and Transfer-Encoding together
	FaultFolding                 // obsolete line folding
	FaultTooLarge                // a Content-Length over the server's body limit
	FaultFieldName               // a field name that is not a token
)

// faultMessages holds each fault's message, indexed by Fault.
var faultMessages = [...]string{
	FaultLengthAndEncoding: "The request has both Content-Length and Transfer-Encoding",
	FaultFolding:           "The request uses obsolete header line folding",
	FaultTooLarge:          "The request body is larger than the server accepts",
	FaultFieldName:         "The request has a header field name that is not a token",
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

// tokenName reports whether line (one header line without its LF, or the
// blank line ending the block) has a field name without whitespace. fasthttp has
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
