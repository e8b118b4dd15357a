package wasm

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/wasm/guest"
)

// TestRequestRoundTrip encodes real requests with the host encoder and
// decodes them with the guest SDK: every field survives, byte for byte.
func TestRequestRoundTrip(t *testing.T) {
	var got guest.Request
	var encErr error
	app := fx.New()
	h := func(c *fx.Ctx) error {
		rc := c.RequestCtx()
		size, nh, np := requestSize(c, rc)
		enc := encodeRequest(make([]byte, 0, size), c, rc, nh, np)
		if len(enc) != size {
			t.Errorf("encoded %d bytes, sized %d", len(enc), size)
		}
		got, encErr = guest.DecodeRequest(enc)
		// Any truncation must be detected, never panic.
		for i := range enc {
			if _, err := guest.DecodeRequest(enc[:i]); err == nil {
				t.Errorf("prefix of %d/%d bytes decoded", i, len(enc))
				break
			}
		}
		return c.NoContent(204)
	}
	app.Post("/items/:id/*rest", h)
	body := []byte("\x00\x01 body with NUL and \xff invalid UTF-8")
	req := httptest.NewRequest("POST", "/items/7%208/a/b?x=1&y=%FF&x=2", bytes.NewReader(body))
	req.Header.Add("X-Multi", "one")
	req.Header.Add("X-Multi", "two")
	req.Header.Set("Cookie", "a=1; b=2")
	resp, err := app.Test(req)
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("%v %v", err, resp)
	}
	if encErr != nil {
		t.Fatal(encErr)
	}
	if got.Method != "POST" || got.Path != "/items/7 8/a/b" || got.Query != "x=1&y=%FF&x=2" {
		t.Errorf("method/path/query: %q %q %q", got.Method, got.Path, got.Query)
	}
	if !bytes.Equal(got.Body, body) {
		t.Errorf("body %q", got.Body)
	}
	if v := got.Header.Values("x-multi"); strings.Join(v, ",") != "one,two" {
		t.Errorf("X-Multi %q (headers %v)", v, got.Header)
	}
	if got.Header.Get("Cookie") == "" || got.Header.Get("Host") == "" {
		t.Errorf("headers %v", got.Header)
	}
	if got.Param("id") != "7 8" || got.Param("rest") != "a/b" {
		t.Errorf("params %v", got.Params)
	}
}

// TestResponseRoundTrip: what the guest SDK encodes, the host accepts and
// reproduces exactly.
func TestResponseRoundTrip(t *testing.T) {
	cases := []guest.Response{
		{},
		guest.Text(404, "nope \"quoted\" \\ \n\t\x01 ünïcode"),
		guest.JSON(200, []byte(`{"a":1}`)),
		{Status: 201, Body: []byte{0, 0xff, 0xfe, 'x'}},
		{Status: 200, Header: guest.Header{{"Set-Cookie", "a=1"}, {"X-One", "1"}, {"set-cookie", "b=2"}}},
	}
	for _, c := range cases {
		doc := guest.AppendResponse(nil, c)
		var r response
		if err := parseResponse(doc, &r); err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		wantStatus := c.Status
		if wantStatus == 0 {
			wantStatus = 200
		}
		if r.status != wantStatus || !bytes.Equal(r.body, c.Body) {
			t.Errorf("%s: status %d body %q", doc, r.status, r.body)
		}
		if len(r.headers) != len(c.Header) {
			t.Errorf("%s: %d headers, want %d", doc, len(r.headers), len(c.Header))
		}
	}
	doc := string(guest.AppendResponse(nil, cases[4]))
	if doc != `{"status":200,"headers":{"Set-Cookie":["a=1","b=2"],"X-One":"1"}}` {
		t.Errorf("grouping: %s", doc)
	}
}

// FuzzParseResponse checks the hand-written parser against encoding/json:
// whatever it accepts is valid JSON with the same status and body, and its
// headers pass the validation rules.
func FuzzParseResponse(f *testing.F) {
	f.Add([]byte(`{"status":200,"headers":{"a":["b"]},"body":"x"}`))
	f.Add([]byte(`{"status":200,"bodyBase64":"AA=="}`))
	f.Add([]byte(`{"status":200} {}`))
	f.Add([]byte(`{"body":"\ud83d\ude00 \ud800 \u00e9\n","status":404}`))
	f.Add([]byte("{\"status\":200,\"body\":\"\xff\xfe\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r response
		if parseResponse(data, &r) != nil {
			return
		}
		if r.status < 200 || r.status > 599 {
			t.Fatalf("accepted status %d", r.status)
		}
		for _, h := range r.headers {
			if !validHeaderName(h.name) || !validHeaderValue(h.value) || refusedHeaders[strings.ToLower(h.name)] {
				t.Fatalf("accepted header %q: %q", h.name, h.value)
			}
		}
		var std struct {
			Status     int
			Body       *string
			BodyBase64 []byte `json:"bodyBase64"`
		}
		if err := json.Unmarshal(data, &std); err != nil {
			t.Fatalf("accepted %q, encoding/json: %v", data, err)
		}
		body := std.BodyBase64
		if std.Body != nil {
			body = []byte(*std.Body)
		}
		if std.Status != r.status || !bytes.Equal(body, r.body) {
			t.Fatalf("%q: status %d body %q; encoding/json: %d %q", data, r.status, r.body, std.Status, body)
		}
	})
}

// FuzzResponseRoundTrip: every response the guest SDK can encode is
// accepted and reproduced (when its headers are legal).
func FuzzResponseRoundTrip(f *testing.F) {
	f.Add(200, "X-A", "v", []byte("body"))
	f.Add(599, "Set-Cookie", "a=1", []byte{0, 0xff})
	f.Fuzz(func(t *testing.T, status int, name, value string, body []byte) {
		if status < 200 || status > 599 || !validHeaderName(name) || !validHeaderValue(value) || refusedHeaders[strings.ToLower(name)] {
			return
		}
		doc := guest.AppendResponse(nil, guest.Response{Status: status, Header: guest.Header{{name, value}}, Body: body})
		var r response
		if err := parseResponse(doc, &r); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		wantBody := body
		if utf8.Valid(body) {
			wantBody = []byte(string(body))
		}
		if r.status != status || !bytes.Equal(r.body, wantBody) || len(r.headers) != 1 || (utf8.ValidString(value) && r.headers[0].value != value) {
			t.Fatalf("%s: %+v", doc, r)
		}
	})
}
