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
	"unicode/utf8"

	"github.com/fxhq/fx"
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
		r.header, _ = parseHeader(r.head)
	}
	return r.header
}

// parseHeader parses the headers of head (the status line is skipped),
// never returning a nil map; the error says which line is malformed.
func parseHeader(head []byte) (http.Header, error) {
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(head)))
	_, _ = tp.ReadLine() // the status line, read by parseStatus
	h, err := tp.ReadMIMEHeader()
	if h == nil {
		h = textproto.MIMEHeader{}
	}
	return http.Header(h), err
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

// CheckEnvelope checks that a response read by other means than the test
// client (a loopback socket, net/http, a generated client) is exactly one
// fx error envelope for its status, and returns it decoded:
//
//   - Content-Type application/json, a body of valid UTF-8 holding one
//     JSON value and nothing after it;
//   - that value is {"error":{...}} with a string "code", a string
//     "message" and, optionally, "details" (never null, never {}), and no
//     other key;
//   - the code is a catalog code sent with its status (fx.ErrorStatus), or
//     one of appCodes sent with the status appCodes gives it;
//   - a 500 FX_INTERNAL_ERROR says only "Internal server error", with no
//     details (what production sends; pass a development App's responses
//     elsewhere).
//
// The error says what is wrong, quoting the body. appCodes may be nil.
// Response.AssertError checks the same wire format on a test client's
// response.
func CheckEnvelope(status int, header http.Header, body []byte, appCodes map[string]int) (Envelope, error) {
	if ct := header.Get("Content-Type"); ct != "application/json" {
		return Envelope{}, fmt.Errorf("status %d: Content-Type %q, want application/json; body %q", status, ct, body)
	}
	env, err := CheckEnvelopeBody(body)
	if err != nil {
		return env, fmt.Errorf("status %d: %v", status, err)
	}
	want, known := fx.ErrorStatus[env.Code]
	if !known {
		want, known = appCodes[env.Code]
	}
	if !known {
		return env, fmt.Errorf("status %d: code %q is neither a catalog code nor one of the app's", status, env.Code)
	}
	if want != status {
		return env, fmt.Errorf("code %s came with status %d, want %d", env.Code, status, want)
	}
	if env.Code == fx.ErrorCodes.InternalError && (env.Message != "Internal server error" || env.Details != nil) {
		return env, fmt.Errorf("a production 500 says more than %q: %q", "Internal server error", body)
	}
	return env, nil
}

// CheckEnvelopeBody checks that body alone, without a status or headers
// (a logged response, a message on another channel), is exactly one fx
// error envelope in the wire format CheckEnvelope checks (UTF-8, one JSON
// value {"error":{...}} with a string code, a string message and optional
// details that are neither null nor {}, no other key), and returns it
// decoded. The error says what is wrong, quoting the body.
func CheckEnvelopeBody(body []byte) (Envelope, error) {
	if err := envelopeShape(body); err != nil {
		return Envelope{}, err
	}
	env, err := decodeEnvelope(body)
	if err != nil {
		return env, fmt.Errorf("%v: %q", err, body)
	}
	return env, nil
}

// envelopeShape checks the wire format of an envelope body: valid UTF-8,
// one JSON object {"error":{...}} and nothing after it, the error object
// holding a string code, a string message and optional details that are
// neither null nor {}, and no other key.
func envelopeShape(body []byte) error {
	if !utf8.Valid(body) {
		return fmt.Errorf("the body is not UTF-8: %q", body)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return fmt.Errorf("the body is not JSON: %v: %q", err, body)
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the envelope: %q", body)
	}
	inner, ok := top["error"]
	if len(top) != 1 || !ok {
		return fmt.Errorf(`the body is not an error envelope {"error":{...}}: %q`, body)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(inner, &fields); err != nil || fields == nil {
		return fmt.Errorf("error is not an object: %q", body)
	}
	for k, v := range fields {
		switch k {
		case "code", "message":
			var s string
			if json.Unmarshal(v, &s) != nil {
				return fmt.Errorf("%s is not a string: %q", k, body)
			}
		case "details":
			if d := string(v); d == "null" || d == "{}" {
				return fmt.Errorf("details present but empty (%s): %q", d, body)
			}
		default:
			return fmt.Errorf("unexpected key %q in error: %q", k, body)
		}
	}
	if _, ok := fields["code"]; !ok {
		return fmt.Errorf("no code: %q", body)
	}
	if _, ok := fields["message"]; !ok {
		return fmt.Errorf("no message: %q", body)
	}
	return nil
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
