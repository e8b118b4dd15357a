package fx

import (
	"bufio"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// parsedRequest parses raw's head (and body) as fasthttp's server does.
func parsedRequest(t *testing.T, raw string) *fasthttp.Request {
	t.Helper()
	req := new(fasthttp.Request)
	if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		t.Fatal(err)
	}
	return req
}

// TestLineMirrorGap: a request whose bytes may have fallen into a gap of
// the record (read while it was full) cannot be checked and is refused;
// one read after the gap is checked again.
func TestLineMirrorGap(t *testing.T) {
	first := "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n" + strings.Repeat("b", 100)
	second := "GET /next HTTP/1.1\r\nHost: a\r\n\r\n"
	m := lineMirror{limit: 64}
	m.feed([]byte(first + second)) // one read: the record keeps 64 bytes
	if f := m.check(parsedRequest(t, first)); f != faultNone {
		t.Fatalf("first: %v, want none", f)
	}
	if f := m.check(parsedRequest(t, second)); f != faultUnchecked {
		t.Fatalf("second, lost in the gap: %v, want unchecked", f)
	}
	m.feed([]byte(second))
	if f := m.check(parsedRequest(t, second)); f != faultNone {
		t.Fatalf("third, read whole: %v, want none", f)
	}
	m.feed([]byte("GET /next HTTP/1.1\nHost: a\r\n\r\n"))
	if f := m.check(parsedRequest(t, second)); f != faultBareLineEnd {
		t.Fatalf("bare LF: %v, want bare", f)
	}
}
