package fxtest

import (
	"strings"
	"testing"
)

// parseResponse reads what fasthttp writes, and refuses (with an error Do
// reports, never a panic or an index out of range) any truncation of it.
func TestParseResponse(t *testing.T) {
	cases := []struct{ raw, body string }{
		{"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok", "ok"},
		{"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 3\r\n\r\nnew", "new"},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nab\r\n3\r\ncde\r\n0\r\nT: v\r\n\r\n", "abcde"},
		{"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nto the end", "to the end"},
		{"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", ""},
	}
	for _, c := range cases {
		_, body, _, err := parseResponse([]byte(c.raw), false)
		if err != nil || string(body) != c.body {
			t.Errorf("%q: body %q, %v; want %q", c.raw, body, err, c.body)
		}
		// A truncation is refused, or (past the head of a body that runs
		// to the end, or in a chunked body's trailers) read as a prefix.
		for n := range len(c.raw) {
			_, body, _, err := parseResponse([]byte(c.raw[:n]), false)
			if err == nil && !strings.HasPrefix(c.body, string(body)) {
				t.Errorf("%q cut at %d: body %q", c.raw, n, body)
			}
		}
	}
	if _, body, status, err := parseResponse([]byte(cases[0].raw), true); err != nil || status != 200 || len(body) != 0 {
		t.Errorf("HEAD: %d %q %v", status, body, err)
	}
	for _, bad := range []string{"", "HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "HTTP/1.1 200 OK\nX: y\n\n"} {
		if _, _, _, err := parseResponse([]byte(bad), false); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
