package fx_test

import (
	"bytes"
	"strings"
	"testing"
)

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
