// Package kittest holds the test helpers shared by the kit packages'
// tests (health, static, middleware, middleware/jwt): they check the wire
// envelope, drive an App's handler directly, without a server, and mint
// the JWT fixtures (jwt.go). Only tests import it.
package kittest

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/valyala/fasthttp"
)

// Envelope is a decoded error envelope; Details stays raw.
type Envelope struct {
	Code    string
	Message string
	Details json.RawMessage
}

// CheckEnvelope checks that body is an error envelope of the wire format
// with code: valid UTF-8 JSON, exactly {"error":{...}} holding code,
// message and optional details (neither null nor {}), and returns it.
func CheckEnvelope(t testing.TB, body []byte, code string) Envelope {
	t.Helper()
	if !utf8.Valid(body) || !json.Valid(body) {
		t.Fatalf("body is not valid UTF-8 JSON: %q", body)
	}
	var outer map[string]map[string]json.RawMessage
	if err := json.Unmarshal(body, &outer); err != nil || len(outer) != 1 || outer["error"] == nil {
		t.Fatalf("body %q is not an envelope (%v)", body, err)
	}
	var env Envelope
	for k, v := range outer["error"] {
		var err error
		switch k {
		case "code":
			err = json.Unmarshal(v, &env.Code)
		case "message":
			err = json.Unmarshal(v, &env.Message)
		case "details":
			env.Details = v
			if bytes.Equal(v, []byte("null")) || bytes.Equal(v, []byte("{}")) {
				t.Errorf("body %q: details must be absent, not %s", body, v)
			}
		default:
			t.Errorf("body %q: unexpected key %q", body, k)
		}
		if err != nil {
			t.Errorf("body %q: %s: %v", body, k, err)
		}
	}
	if env.Message == "" {
		t.Errorf("body %q: no message", body)
	}
	if env.Code != code {
		t.Errorf("code = %q, want %q (body %q)", env.Code, code, body)
	}
	return env
}

// RequestCtx returns a RequestCtx for method and path, initialised as
// fasthttp's server would, for calling a handler directly.
func RequestCtx(method, path string) *fasthttp.RequestCtx {
	var rc fasthttp.RequestCtx
	rc.Init(new(fasthttp.Request), nil, nil)
	rc.Request.Header.SetMethod(method)
	rc.Request.SetRequestURI(path)
	return &rc
}

// Bench runs h on method and path b.N times, in process, after checking
// once that it answers status; allocations are reported.
func Bench(b *testing.B, h fasthttp.RequestHandler, method, path string, status int) {
	b.Helper()
	rc := RequestCtx(method, path)
	h(rc)
	if rc.Response.StatusCode() != status {
		b.Fatalf("status %d, want %d: %s", rc.Response.StatusCode(), status, rc.Response.Body())
	}
	b.ReportAllocs()
	for b.Loop() {
		rc.Response.Reset()
		h(rc)
	}
}
