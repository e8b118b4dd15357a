package conn

import (
	"bufio"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

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
