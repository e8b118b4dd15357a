package nethttp

import (
	"errors"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"strings"

	"github.com/fxhq/fx"
)

// Whose fault a body read failure is. The adapter answers 500
// FX_NODE_INTERNAL_ERROR when it cannot translate a request or response,
// unless the failure is the client's.
//
// A request body net/http cannot read is, almost always, the client's
// doing: a malformed chunk-size line, a body cut short of its
// Content-Length, a client too slow for the server's read deadline. These
// were answered 500 FX_NODE_INTERNAL_ERROR and logged as server faults,
// so any client could fill the 5xx log and alerting with its own mistakes;
// fasthttp's transport answers the same requests 400, 408 or 413. They
// now get that transport's codes and words; only a failure the client
// cannot cause (a body reader that fails on its own, as a wrapping
// middleware's might) stays 500.

// bodyReadWire is the wire error for err, a failure reading the request
// body.
func bodyReadWire(err error) *fx.Error {
	var tooLarge *http.MaxBytesError
	var timeout interface{ Timeout() bool } // net.Error and friends
	switch {
	case err == nil:
		return errReadBody
	case errors.As(err, &tooLarge):
		return errTooLarge
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &timeout) && timeout.Timeout():
		return errBodyTimeout
	case malformedBody(err):
		return errBadBody
	}
	return errReadBody
}

// malformedBody reports whether err is net/http's report of a body the
// client framed badly or cut short. net/http's chunked reader returns
// unexported errors.New values, so they are recognised by their text (as
// of Go 1.26); should a later Go word one differently, that failure falls
// back to 500, never to a wrong 400.
func malformedBody(err error) bool {
	var proto textproto.ProtocolError // a malformed trailer
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, http.ErrLineTooLong) || errors.As(err, &proto) {
		return true
	}
	msg := err.Error()
	switch msg {
	case "malformed chunked encoding",
		"invalid byte in chunk length",
		"empty hex number for chunk length",
		"http chunk length too large",
		"chunked line ends with bare LF",
		"invalid CR in chunked line",
		"chunked encoding contains too much non-data",
		"http: unexpected EOF reading trailer",
		"http: suspiciously long trailer after chunked body":
		return true
	}
	return strings.HasPrefix(msg, "bad trailer key")
}
