package conn

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
	if f := m.check(parsedRequest(t, first)); f != FaultNone {
		t.Fatalf("first: %v, want none", f)
	}
	if f := m.check(parsedRequest(t, second)); f != FaultUnchecked {
		t.Fatalf("second, lost in the gap: %v, want unchecked", f)
	}
	m.feed([]byte(second))
	if f := m.check(parsedRequest(t, second)); f != FaultNone {
		t.Fatalf("third, read whole: %v, want none", f)
	}
	m.feed([]byte("GET /next HTTP/1.1\nHost: a\r\n\r\n"))
	if f := m.check(parsedRequest(t, second)); f != FaultBareLineEnd {
		t.Fatalf("bare LF: %v, want bare", f)
	}
}

// typicalAPIHeader is the head of a typical API request (11 lines, 550
// bytes, a body of 27 bytes announced), shared by the framing benchmarks.
const typicalAPIHeader = "POST /api/v1/orders?expand=items HTTP/1.1\r\n" +
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
	raw := typicalAPIHeader + `{"item":"book","count":123}`
	var req fasthttp.Request
	if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		b.Fatal(err)
	}
	m := lineMirror{limit: mirrorLimit(8 << 10)}
	wire := []byte(raw)
	b.ReportAllocs()
	for b.Loop() {
		m.feed(wire)
		if m.check(&req) != FaultNone {
			b.Fatal("refused")
		}
	}
}

// BenchmarkFraming measures what the framing guard (FramingGuard, the
// Server's HeaderReceived hook) adds to a well-framed request, on a header typical of
// an API client (11 lines, 550 bytes): "guard" is the hook alone; "parse" is
// fasthttp's parsing of the same header, which every request already pays,
// as the yardstick on a machine whose speed varies.
func BenchmarkFraming(b *testing.B) {
	const req = typicalAPIHeader
	b.Run("guard", func(b *testing.B) {
		hook := FramingGuard(&fasthttp.Server{MaxRequestBodySize: 4 << 20}) // fx's default BodyLimit
		var h fasthttp.RequestHeader
		if err := h.Read(bufio.NewReader(strings.NewReader(req))); err != nil {
			b.Fatal(err)
		}
		if len(h.RawHeaders()) == 0 {
			b.Fatal("no raw headers")
		}
		b.ReportAllocs()
		for b.Loop() {
			hook(&h)
		}
		if string(h.RequestURI()) != "/api/v1/orders?expand=items" {
			b.Fatalf("well-framed request refused: URI now %q", h.RequestURI())
		}
	})
	b.Run("parse", func(b *testing.B) {
		var h fasthttp.RequestHeader
		r := strings.NewReader(req)
		br := bufio.NewReader(r)
		b.ReportAllocs()
		for b.Loop() {
			r.Reset(req)
			br.Reset(r)
			h.Reset()
			if err := h.Read(br); err != nil {
				b.Fatal(err)
			}
		}
	})
}
