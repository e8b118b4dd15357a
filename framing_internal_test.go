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

// TypicalAPIHeader is the head of a typical API request (11 lines, 550
// bytes, a body of 27 bytes announced), shared by the framing benchmarks.
const TypicalAPIHeader = "POST /api/v1/orders?expand=items HTTP/1.1\r\n" +
	"Host: api.example.com\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36\r\n" +
	"Accept: application/json\r\n" +
	"Accept-Encoding: gzip, deflate, br\r\n" +
	"Accept-Language: en-US,en;q=0.9\r\n" +
	"Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0In0.abc\r\n" +
	"Content-Type: application/json\r\n" +
	"Content-Length: 27\r\n" +
	"Cookie: session=0123456789abcdef; theme=dark\r\n" +
	"X-Request-Id: 3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b\r\n" +
	"\r\n"

// BenchmarkRequestLine: what the request-line check costs a request read
// in one piece: recording it (feed) and finding it (check), on the
// 11-line, 550-byte header of BenchmarkFraming.
func BenchmarkRequestLine(b *testing.B) {
	raw := TypicalAPIHeader + `{"item":"book","count":123}`
	var req fasthttp.Request
	if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		b.Fatal(err)
	}
	m := lineMirror{limit: mirrorLimit(8 << 10)}
	wire := []byte(raw)
	b.ReportAllocs()
	for b.Loop() {
		m.feed(wire)
		if m.check(&req) != faultNone {
			b.Fatal("refused")
		}
	}
}
