package fx_test

// Fuzz targets of the reliability work. Each has seeds (f.Add, plus any
// crashers kept in testdata/fuzz/<Target>/) so plain `go test` runs them.
// Run one at a time, for example:
//
//	go test -run '^$' -fuzz '^FuzzRawRequest$' -fuzztime 2m .
//
// The wire helpers they use (memConn, exchangeRaw, checkWire, ...) are
// in helpers_test.go, shared with the server's and the boundary's tests.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
)

// fuzzItem is the body type of the fuzz and reliability apps.
type fuzzItem struct {
	Name   string            `json:"name"`
	Qty    int               `json:"qty"`
	Tags   []string          `json:"tags"`
	Attrs  map[string]string `json:"attrs"`
	Nested *struct {
		OK    bool    `json:"ok"`
		Score float64 `json:"score"`
	} `json:"nested"`
}

var fuzzAppCodes = map[string]int{"APP_NOPE": 409, "APP_TEAPOT": 418}

var (
	errNope  = fx.NewError(409, "APP_NOPE", "Nope", map[string]any{"why": "because"})
	errRelMW = errors.New("middleware failure (internal text)")
)

// fuzzApp is an App with one route per kind of outcome: success with
// params, a decoded body, *fx.Error, a plain error, a panic, a catch-all,
// and middleware that fails on request.
func fuzzApp() *fx.App {
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		switch c.Header("X-Fail") {
		case "mw":
			return errRelMW
		case "panic":
			panic("middleware panic")
		}
		return next()
	})
	app.Get("/users/:id", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"id": c.Param("id"), "q": c.Query("q")})
	})
	app.Get("/files/*rest", func(c *fx.Ctx) error { return c.JSON(200, map[string]string{"rest": c.Param("rest")}) })
	app.Post("/items", func(c *fx.Ctx) error {
		it, err := fx.JSONBody[fuzzItem](c)
		if err != nil {
			return err
		}
		return c.JSON(201, it)
	})
	app.Get("/nope", func(c *fx.Ctx) error { return errNope })
	app.Get("/teapot", func(c *fx.Ctx) error {
		return fx.NewError(418, "APP_TEAPOT", c.Query("msg"), map[string]string{"q": c.Query("d")})
	})
	app.Get("/fail", func(c *fx.Ctx) error { return errors.New("db password=hunter2 at /srv/app/db.go:12") })
	app.Get("/panic", func(c *fx.Ctx) error { panic(c.Query("v")) })
	app.Put("/echo", func(c *fx.Ctx) error { return c.Send(200, "application/octet-stream", c.Body()) })
	return app
}

var fuzzAppOnce = sync.OnceValue(fuzzApp)

// FuzzRawRequest feeds arbitrary bytes, as a client connection's whole
// input, to the App's real fasthttp server (Server().ServeConn over an
// in-memory connection). Whatever the bytes, the output must be a sequence
// of well-formed HTTP responses, every error status with a valid envelope
// and the right status for its code; a panic or a hang fails the fuzzer.
func FuzzRawRequest(f *testing.F) {
	seeds := []string{
		"GET /users/42?q=x HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /users/%ff%00?q=%zz HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /nope HTTP/1.1\r\nHost: a\r\n\r\nGET /fail HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /panic?v=%22%5C%00 HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /teapot?msg=%E2%80%A8%ff&d=%01 HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /files/a/../../b%2f HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /users/1 HTTP/1.1\r\nHost: a\r\nX-Fail: mw\r\n\r\n",
		"GET /nothing HTTP/1.1\r\nHost: a\r\nX-Fail: panic\r\n\r\n",
		"POST /items HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n{\"name\":\"a\",\"qty\":\"three\"}",
		"POST /items HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n{\"na",
		"POST /items HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n0\r\n\r\n",
		"POST /items HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999\r\n\r\nabc",
		"PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
		"PUT /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc",
		"GET / HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n",
		"GET /\x00\x7f\xff HTTP/1.1\r\n\r\n",
		"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"GET http://evil.example/users/1 HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /users/1 HTTP/1.0\r\n\r\n",
		"GET /users/1\r\n\r\n",
		"BREW /users/1 HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /users/1 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET /nope HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /users/1 HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-Big: "+strings.Repeat("b", 500)+"\r\n", 20) + "\r\n",
		"",
		"\r\n\r\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if bytes.Contains(raw, []byte("HEAD ")) {
			t.Skip("responses to HEAD cannot be framed without the request")
		}
		app := fuzzAppOnce()
		out := exchangeRaw(app, raw)
		ws, err := checkWire(out, fuzzAppCodes)
		if err != nil {
			t.Fatalf("input %q\noutput %q\n%v", raw, out, err)
		}
		for _, w := range ws {
			if w.status == 500 && !bytes.Equal(w.body, []byte(`{"error":{"code":"FX_INTERNAL_ERROR","message":"Internal server error"}}`)) {
				t.Fatalf("500 body leaks: %q", w.body)
			}
		}
	})
}

// FuzzRoutePatterns registers arbitrary route patterns (one per line) and
// then requests an arbitrary path. Registering must never panic: a bad
// pattern is a boot error made of *fx.Error values. A booted App (or one
// whose boot failed) must answer with a well-formed response: success for
// a matched route, else a valid envelope.
func FuzzRoutePatterns(f *testing.F) {
	f.Add("/a/:id\n/a/:id/b", "/a/1/b")
	f.Add("/a/:id\n/a/:name", "/a/x")
	f.Add("/a/*rest\n/a/b", "/a/b/c")
	f.Add("/:a/:a", "/x/y")
	f.Add("/*\n/a", "/a")
	f.Add("/a/*r/b", "/a/x/b")
	f.Add("/a::b\n/a/:\n/{x}\nrel\n", "/a")
	f.Add("/\n//\n///:x", "//")
	f.Add("/a/:id\n/a/:id", "/a/%2f")
	f.Add("/ü/:ид/ñ", "/%C3%BC/x/%C3%B1")
	f.Add("/a/:b.:c\n/a/:b-x", "/a/1.2")
	f.Add("/a/{b:*}", "/a/b")
	f.Add("/files/*path\n/files/x/:y", "/files/x/1")
	f.Fuzz(func(t *testing.T, patterns, path string) {
		if strings.Contains(path, "HEAD ") {
			t.Skip()
		}
		app := quiet()
		lines := strings.Split(patterns, "\n")
		if len(lines) > 8 {
			lines = lines[:8]
		}
		for i, p := range lines {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("registering %q panicked: %v", p, r)
					}
				}()
				i := i
				app.Get(p, func(c *fx.Ctx) error {
					params := map[string]string{}
					for k, v := range c.Params {
						params[k] = v
					}
					return c.JSON(200, map[string]any{"route": i, "params": params})
				})
			}()
		}
		var bootErr error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("Boot panicked for %q: %v", lines, r)
				}
			}()
			bootErr = app.Boot()
		}()
		if bootErr != nil {
			for _, e := range unjoin(bootErr) {
				var fe *fx.Error
				if !errors.As(e, &fe) {
					t.Fatalf("boot error %T %v is not an *fx.Error", e, e)
				}
			}
		}
		req := "GET " + path + " HTTP/1.1\r\nHost: a\r\n\r\n"
		out := exchangeRaw(app, []byte(req))
		ws, err := checkWire(out, nil)
		if err != nil {
			t.Fatalf("patterns %q path %q\noutput %q\n%v", lines, path, out, err)
		}
		for _, w := range ws {
			// A request fasthttp cannot parse never reaches the failed
			// boot's handler: 400 FX_BAD_REQUEST (found by this fuzzer:
			// path "0").
			if bootErr != nil && w.status != 500 && w.status != 400 {
				t.Fatalf("failed boot answered %d, want 500: %q", w.status, w.body)
			}
			if w.status == 200 && !json.Valid(w.body) {
				t.Fatalf("success body is not JSON: %q", w.body)
			}
		}
	})
}

// unjoin flattens an errors.Join tree.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unjoin(e)...)
		}
		return out
	}
	return []error{err}
}

// replaceInvalid is what the envelope encoder promises for a string:
// every byte of an invalid UTF-8 sequence becomes U+FFFD.
func replaceInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// badJSON is a details value whose MarshalJSON misbehaves.
type badJSON struct {
	Mode string
}

func (b badJSON) MarshalJSON() ([]byte, error) {
	switch b.Mode {
	case "panic":
		panic("MarshalJSON panicked (internal text)")
	case "error":
		return nil, errors.New("MarshalJSON failed (internal text)")
	case "invalid":
		return []byte(`{"unterminated`), nil
	}
	return []byte(`"ok"`), nil
}

type cyclicDetails struct {
	Name string
	Next *cyclicDetails
}

// FuzzAppendEnvelope encodes arbitrary code, message and details with
// fx.AppendEnvelope. The output must be one valid JSON envelope whose code
// and message decode to the input (invalid UTF-8 replaced), and whose
// details, when encodable and not empty, decode to the same value.
func FuzzAppendEnvelope(f *testing.F) {
	f.Add("APP_X", "hello", []byte(`{"a":[1,"b",null,true,{"c":1.5}]}`), uint8(0), "s")
	f.Add("\x00\"\\\n", "\xff\xfe\u2028\u2029</script>", []byte(`null`), uint8(0), "")
	f.Add("", "", []byte(`{}`), uint8(0), "")
	f.Add("C", "m", []byte(`[]`), uint8(0), "")
	f.Add("C", "m", []byte(`1e308`), uint8(0), "")
	f.Add("C", "m", []byte(`"x"`), uint8(1), "\xff\x00\"")
	f.Add("C", "m", []byte(``), uint8(2), "panic")
	f.Add("C", "m", []byte(``), uint8(2), "error")
	f.Add("C", "m", []byte(``), uint8(2), "invalid")
	f.Add("C", "m", []byte(``), uint8(3), "")
	f.Add("C", "m", []byte(``), uint8(4), "")
	f.Add("C", "m", []byte(``), uint8(5), "k\xff")
	f.Add("C", "m", []byte(``), uint8(6), "")
	f.Fuzz(func(t *testing.T, code, msg string, detailsJSON []byte, kind uint8, s string) {
		var details any
		var want any // the decoded details we expect; nil = no details key
		comparable := true
		switch kind % 7 {
		case 0: // any JSON value
			if err := json.Unmarshal(detailsJSON, &details); err != nil {
				details = nil
			}
			want = details
		case 1: // a string, possibly invalid UTF-8
			details = map[string]string{"s": s}
			want = map[string]any{"s": replaceInvalid(s)}
		case 2:
			details = badJSON{Mode: s}
			comparable = false
		case 3:
			details = map[string]any{"ch": make(chan int)}
			comparable = false
		case 4:
			c := &cyclicDetails{Name: s}
			c.Next = c
			details = c
			comparable = false
		case 5: // invalid UTF-8 in a key
			details = map[string]int{s: 1}
			want = map[string]any{replaceInvalid(s): float64(1)}
		case 6:
			details = []any{func() {}, s}
			comparable = false
		}
		var out []byte
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("AppendEnvelope panicked: %v", r)
				}
			}()
			out = fx.AppendEnvelope([]byte("prefix"), &fx.Error{Status: 400, Code: code, Message: msg, Details: details})
		}()
		if !bytes.HasPrefix(out, []byte("prefix")) {
			t.Fatalf("dst prefix lost: %q", out)
		}
		out = out[len("prefix"):]
		if !utf8.Valid(out) {
			t.Fatalf("not UTF-8: %q", out)
		}
		var env struct {
			Error map[string]json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(out, &env); err != nil {
			t.Fatalf("not JSON: %v: %q", err, out)
		}
		var gotCode, gotMsg string
		_ = json.Unmarshal(env.Error["code"], &gotCode)
		_ = json.Unmarshal(env.Error["message"], &gotMsg)
		if gotCode != replaceInvalid(code) || gotMsg != replaceInvalid(msg) {
			t.Fatalf("code/message %q/%q decode to %q/%q", code, msg, gotCode, gotMsg)
		}
		if bytes.ContainsAny(out, "\u2028\u2029") {
			t.Fatalf("U+2028/U+2029 not escaped: %q", out)
		}
		raw, has := env.Error["details"]
		if has && (string(raw) == "null" || string(raw) == "{}") {
			t.Fatalf("empty details present: %q", out)
		}
		if !comparable {
			return
		}
		if m, ok := want.(map[string]any); want == nil || ok && len(m) == 0 {
			if has {
				t.Fatalf("details %q present for empty value %#v", raw, details)
			}
			return
		}
		if !has {
			t.Fatalf("details missing for %#v: %q", details, out)
		}
		var got any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("details not JSON: %q", raw)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("details %#v encode as %s, decode to %#v", details, raw, got)
		}
	})
}

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

// leakMarkers are strings that betray internals in a response body.
var leakMarkers = []string{
	"goroutine", "panic:", ".go:", "/usr/", "/root/", "/home/", "/tmp/", "/srv/", "runtime.",
	"fx_test", "fuzzItem", "badJSON", "cyclicDetails", "*fx.", "fx.Ctx", "main.", "[]string", "map[",
	"struct {", "interface {", "reflect.", "json:", "go-json", "encoding/json", "hunter2", "internal text",
	"chan int", "func()", "unsupported type", "unsupported value", "Go value", "Go struct",
}

// leakyText returns the first internal marker found in s, or "".
func leakyText(s string) string {
	for _, m := range leakMarkers {
		if strings.Contains(s, m) {
			return m
		}
	}
	return ""
}
