package fx_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
)

// FuzzJSONBody posts an arbitrary body (and Content-Type) to a handler that
// decodes it with fx.JSONBody[fuzzItem]. The answer must be a 201 echo that
// encoding/json agrees with, or a 422 FX_VALIDATION_ERROR envelope whose
// issues are all at location "body" and name no Go type.
func FuzzJSONBody(f *testing.F) {
	f.Add([]byte(`{"name":"a","qty":2,"tags":["x"],"attrs":{"k":"v"},"nested":{"ok":true,"score":1.5}}`), "application/json")
	f.Add([]byte(`{"name":1}`), "application/json")
	f.Add([]byte(`{"qty":"three"}`), "")
	f.Add([]byte(`{"qty":1e400}`), "")
	f.Add([]byte(`{"nested":{"ok":"yes"}}`), "")
	f.Add([]byte(`{"name":"a"} trailing`), "application/json")
	f.Add([]byte(`[1,2]`), "application/json; charset=utf-8")
	f.Add([]byte(`{"name":"\ud800\xff"}`), "application/problem+json")
	f.Add([]byte(`   `), "")
	f.Add([]byte(`{"name":"a"}`), "text/plain")
	f.Add([]byte(`{"tags":{"a":1}}`), "")
	f.Add([]byte(`{"attrs":[]} `), "")
	f.Add([]byte(`{"NAME":"a","Qty":1}`), "")
	f.Add([]byte(`{"qty":9223372036854775808}`), "")
	f.Add([]byte("{\"name\":\"a\",\"name\":\"b\"}"), "")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		if strings.ContainsAny(contentType, "\r\n\x00") || len(body) > 1<<16 {
			t.Skip()
		}
		app := fuzzAppOnce()
		var req bytes.Buffer
		req.WriteString("POST /items HTTP/1.1\r\nHost: a\r\n")
		if contentType != "" {
			req.WriteString("Content-Type: " + contentType + "\r\n")
		}
		fmt.Fprintf(&req, "Content-Length: %d\r\n\r\n", len(body))
		req.Write(body)
		out := exchangeRaw(app, req.Bytes())
		ws, err := checkWire(out, fuzzAppCodes)
		if err != nil {
			t.Fatalf("body %q ct %q\noutput %q\n%v", body, contentType, out, err)
		}
		if len(ws) != 1 {
			t.Fatalf("%d responses, want 1: %q", len(ws), out)
		}
		w := ws[0]
		switch w.status {
		case 201:
			var std fuzzItem
			if err := json.Unmarshal(body, &std); err != nil {
				// go-json accepted what encoding/json refuses. Report it
				// only for bodies that are not valid JSON at all.
				if !json.Valid(bytes.TrimSpace(body)) {
					t.Fatalf("JSONBody accepted invalid JSON %q (encoding/json: %v)", body, err)
				}
				return
			}
			var got fuzzItem
			if err := json.Unmarshal(w.body, &got); err != nil {
				t.Fatalf("201 echo is not JSON: %q", w.body)
			}
			if !reflect.DeepEqual(normItem(got), normItem(std)) {
				t.Fatalf("body %q decoded to %+v, encoding/json says %+v", body, got, std)
			}
		case 422:
			env, _ := fxtest.CheckEnvelope(w.status, w.header, w.body, fuzzAppCodes)
			if env.Code != fx.ErrorCodes.ValidationError || env.Message != "Request validation failed" {
				t.Fatalf("422 with %s %q", env.Code, env.Message)
			}
			var d struct {
				Issues []struct {
					Location *string  `json:"location"`
					Path     []string `json:"path"`
					Message  *string  `json:"message"`
				} `json:"issues"`
			}
			if err := json.Unmarshal(env.Details, &d); err != nil || len(d.Issues) == 0 {
				t.Fatalf("422 details malformed: %s", env.Details)
			}
			for _, is := range d.Issues {
				if is.Location == nil || *is.Location != "body" || is.Path == nil || is.Message == nil || *is.Message == "" {
					t.Fatalf("malformed issue in %s", env.Details)
				}
				if leakyText(*is.Message) != "" {
					t.Fatalf("issue message leaks %q: %q", leakyText(*is.Message), *is.Message)
				}
			}
		case 400:
			// fasthttp refuses a header value with control characters
			// (found by this fuzzer: Content-Type "\x0e"); anything else
			// must reach the handler.
			if !strings.ContainsFunc(contentType, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Fatalf("400 for a well-formed request: body %q ct %q: %q", body, contentType, w.body)
			}
		default:
			t.Fatalf("status %d for body %q: %q", w.status, body, w.body)
		}
	})
}

// normItem makes nil and empty collections equal (JSON null vs []).
func normItem(it fuzzItem) fuzzItem {
	if len(it.Tags) == 0 {
		it.Tags = nil
	}
	if len(it.Attrs) == 0 {
		it.Attrs = nil
	}
	return it
}
