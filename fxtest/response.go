package fxtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
)

// Response is a response read back by Do: status, headers and the whole
// body, owned by the Response (nothing aliases server memory). Its Assert
// methods report to the test the request was sent from and return the
// Response, so they chain:
//
//	c.Get("/users/missing").Do().AssertError(404, "APP_USER_NOT_FOUND")
//
// A Response is not safe for concurrent use.
type Response struct {
	Status int
	Body   []byte

	t           testing.TB
	method, uri string      // the request, for failure messages
	head        []byte      // the status line and headers as received
	header      http.Header // parsed from head by Header, on first use
}

// Header returns the response headers (parsed on first use: most
// assertions never need them, and building the map would double what a
// request through Do costs).
func (r *Response) Header() http.Header {
	if r.header == nil {
		tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(r.head)))
		_, _ = tp.ReadLine() // the status line, read by Do already
		h, _ := tp.ReadMIMEHeader()
		r.header = http.Header(h)
		if r.header == nil {
			r.header = http.Header{}
		}
	}
	return r.header
}

// Envelope is the decoded error envelope
// {"error":{"code":...,"message":...,"details":...}}.
type Envelope struct {
	Code    string
	Message string
	// Details is the raw details value; nil when the envelope has none.
	Details json.RawMessage
	// Issues are details.issues of a validation error (FX_VALIDATION_ERROR),
	// in response order; Truncated is details.truncated.
	Issues    []Issue
	Truncated bool
}

// Issue is one validation issue. Path is the issue's path segments joined
// with "." ("items.1.qty"; "" for the value itself). In assertions, an
// empty Message matches any message.
type Issue struct {
	Location string // "body" or "query"
	Path     string
	Message  string
}

// String formats the issue as assertion failures show it:
// "body:items.1.qty (must be at least 1)", without the parenthesis when
// Message is empty.
func (i Issue) String() string {
	s := i.Location + ":" + i.Path
	if i.Message != "" {
		s += " (" + i.Message + ")"
	}
	return s
}

// wireEnvelope is the envelope as sent.
type wireEnvelope struct {
	Error *struct {
		Code    *string         `json:"code"`
		Message *string         `json:"message"`
		Details json.RawMessage `json:"details"`
	} `json:"error"`
}

// decodeEnvelope decodes body as an error envelope; it explains what is
// wrong when body is not one.
func decodeEnvelope(body []byte) (Envelope, error) {
	var w wireEnvelope
	d := json.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(&w); err != nil {
		return Envelope{}, fmt.Errorf("the body is not JSON: %v", err)
	}
	if w.Error == nil || w.Error.Code == nil || w.Error.Message == nil {
		return Envelope{}, fmt.Errorf(`the body is not an error envelope {"error":{"code":...,"message":...}}`)
	}
	env := Envelope{Code: *w.Error.Code, Message: *w.Error.Message}
	if len(w.Error.Details) > 0 {
		env.Details = w.Error.Details
		var det struct {
			Issues []struct {
				Location string   `json:"location"`
				Path     []string `json:"path"`
				Message  string   `json:"message"`
			} `json:"issues"`
			Truncated bool `json:"truncated"`
		}
		if json.Unmarshal(w.Error.Details, &det) == nil {
			for _, is := range det.Issues {
				env.Issues = append(env.Issues, Issue{Location: is.Location, Path: strings.Join(is.Path, "."), Message: is.Message})
			}
			env.Truncated = det.Truncated
		}
	}
	return env, nil
}

// Envelope decodes the body as an error envelope. When the body is not one
// it reports an error (t.Errorf) and returns the zero Envelope.
func (r *Response) Envelope() Envelope {
	r.t.Helper()
	env, err := decodeEnvelope(r.Body)
	if err != nil {
		r.fail("%s", err)
	}
	return env
}

// Decode decodes the JSON body into v (with encoding/json). It fails the
// test (t.Fatalf) when the body does not decode: what follows would only
// report the zero value.
func (r *Response) Decode(v any) {
	r.t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		r.t.Fatalf("%s: decoding the body into %T: %v%s", r.request(), v, err, r.bodyForMessage())
	}
}

// request is the request line, for failure messages ("GET /users/1").
func (r *Response) request() string { return r.method + " " + r.uri }

// maxBodyInMessage bounds the body quoted in a failure message.
const maxBodyInMessage = 4 << 10

// bodyForMessage is the response, for a failure message.
func (r *Response) bodyForMessage() string {
	b := r.Body
	more := ""
	if len(b) > maxBodyInMessage {
		b, more = b[:maxBodyInMessage], fmt.Sprintf("… (%d more bytes)", len(r.Body)-maxBodyInMessage)
	}
	return fmt.Sprintf("\nresponse: %d %s\n%s%s", r.Status, r.Header().Get("Content-Type"), b, more)
}

// fail reports a failed assertion with the request and the response body.
func (r *Response) fail(format string, args ...any) {
	r.t.Helper()
	r.t.Errorf("%s: %s%s", r.request(), fmt.Sprintf(format, args...), r.bodyForMessage())
}
