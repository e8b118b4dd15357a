package conn

import (
	"bufio"
	"bytes"
	"net"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestBareLFHead: which reads are a whole head fasthttp would wait on.
// The heads fasthttp ends itself (a CRLF CRLF somewhere, an empty block
// ended by CRLF, more bytes after the blank line) and bytes that are not a
// request head are not.
func TestBareLFHead(t *testing.T) {
	for raw, want := range map[string]bool{
		"GET / HTTP/1.1\nHost: x\n\n":                                  true,
		"GET / HTTP/1.1\r\nHost: x\n\n":                                true,
		"GET / HTTP/1.1\nHost: x\n\r\n":                                true,
		"POST /a?b=c HTTP/1.0\nX: 1\nContent-Length: 5\n\n":            true,
		"GET / HTTP/1.1\n\n":                                           true,
		"GET / HTTP/1.1\r\n\n":                                         true,
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n":                            false, // well framed
		"GET / HTTP/1.1\nHost: x\r\n\r\n":                              false, // a CRLF CRLF: fasthttp ends it
		"GET / HTTP/1.1\n\r\n":                                         false, // an empty block ended by CRLF
		"GET / HTTP/1.1\nHost: x\n\nGET / HTTP/1.1\r\nHost: x\r\n\r\n": false,
		"GET / HTTP/1.1\nHost: x\n\nhello\n\n":                         false, // bytes after the blank line
		"GET / HTTP/1.1\nHost: x\n":                                    false, // not ended yet
		"hello\nworld\n\n":                                             false, // not a request line
		"GET / HTTP/2.0\nHost: x\n\n":                                  false,
		"GET /a b HTTP/1.1\nHost: x\n\n":                               false,
		"GET / HTTP/1.1\nno colon\n\n":                                 false, // fasthttp refuses it at once
		"\n\n":                                                         false,
		"":                                                             false,
	} {
		if got := bareLFHead([]byte(raw)); got != want {
			t.Errorf("%q: %v, want %v", raw, got, want)
		}
	}
}

// BenchmarkBareLFHead: what the check costs a read that begins a request.
// "crlf" is the usual head (the 11-line, 550-byte one of
// BenchmarkFraming): decided by its last bytes. "bare" is a head ended by a
// bare LF, scanned whole.
func BenchmarkBareLFHead(b *testing.B) {
	for _, bc := range []struct {
		name, raw string
		want      bool
	}{
		{"crlf", typicalAPIHeader, false},
		{"bare", "GET /api/v1/orders HTTP/1.1\nHost: api.example.com\nAccept: application/json\n\n", true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			raw := []byte(bc.raw)
			b.ReportAllocs()
			for b.Loop() {
				if bareLFHead(raw) != bc.want {
					b.Fatal("wrong answer")
				}
			}
		})
	}
}

// headConn is a connection whose every read returns one typical request
// head (typicalAPIHeader) and whose writes succeed at once; its deadlines
// are those of the socket it embeds.
type headConn struct{ net.Conn }

func (headConn) Read(p []byte) (int, error)  { return copy(p, typicalAPIHeader), nil }
func (headConn) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkServedRead: what the connection layer's reads cost one
// keep-alive request (a read of its 550-byte head, then its response):
// "timeoutConn" is the phase timeouts alone, "limitConn" adds the served
// connection's own Read (the byte flag, the draining close's atomic load
// and the bare-LF head check on the read that begins the request). The
// difference is what limitConn.Read costs.
//
//	go test -run '^$' -bench ServedRead ./internal/conn
func BenchmarkServedRead(b *testing.B) {
	_, srv := tcpPair(b)
	limits := Timeouts{Read: defaultRead, Write: defaultWrite, Idle: defaultIdle}.limits()
	buf := make([]byte, 8<<10)
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	b.Run("timeoutConn", func(b *testing.B) {
		tc := newTimeoutConn(headConn{srv}, &limits, true)
		defer tc.done()
		b.ReportAllocs()
		for b.Loop() {
			_, _ = tc.Read(buf)
			_, _ = tc.Write(resp)
		}
	})
	b.Run("limitConn", func(b *testing.B) {
		tc := newTimeoutConn(headConn{srv}, &limits, true)
		defer tc.done()
		c := &limitConn{Conn: tc, l: &limitListener{}}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Read(buf); err != nil {
				b.Fatal(err)
			}
			_, _ = c.Write(resp)
		}
	})
}

// FuzzBareLFHead: a read bareLFHead holds for is never a head fasthttp
// would end by itself: fasthttp's own reading of those bytes, followed by
// the end of the stream, yields no request. So the check refuses nothing
// fasthttp would serve from the same read.
func FuzzBareLFHead(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\nHost: x\n\n",
		"GET / HTTP/1.1\nHost: x\n\r\n",
		"GET / HTTP/1.1\n\r\n",
		"GET / HTTP/1.0\n\n",
		"POST /a HTTP/1.1\r\nHost: x\nContent-Length: 0\n\n",
		typicalAPIHeader,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !bareLFHead(b) {
			return
		}
		var h fasthttp.RequestHeader
		if err := h.Read(bufio.NewReader(bytes.NewReader(b))); err == nil {
			t.Fatalf("%q: refused, but fasthttp reads it as a whole head (%s %s)", b, h.Method(), h.RequestURI())
		}
	})
}
