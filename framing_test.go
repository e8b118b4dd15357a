package fx_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
)

// framingApp answers POST / with the body it read and GET /next with
// "next"; a smuggled request targets /smuggled, which answers "SMUGGLED".
func framingApp(cfg fx.Config) *fx.App {
	app := quiet(cfg)
	app.Post("/", func(c *fx.Ctx) error { return c.String(200, "body="+string(c.Body())) })
	app.Get("/next", func(c *fx.Ctx) error { return c.String(200, "next") })
	app.Get("/smuggled", func(c *fx.Ctx) error { return c.String(200, "SMUGGLED") })
	return app
}

// wireExchange writes raw to a fresh connection in a single write and reads
// responses until it has want of them, the server closes the connection
// (closed is then true) or no byte arrives for 2 s.
func wireExchange(t *testing.T, addr, raw string, want int) (resps []result, closed bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second)) // a bound, not an assertion
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatalf("write: %v", err)
	}
	br := bufio.NewReader(conn)
	for {
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second)) // a bound, not an assertion
		r, err := readResult(br, "GET")
		if errors.Is(err, errBody) {
			t.Fatalf("response %d: %v", len(resps)+1, err)
		}
		if err != nil {
			// EOF or a reset means the server closed the connection; a
			// timeout means it left it open.
			return resps, !errors.Is(err, os.ErrDeadlineExceeded)
		}
		resps = append(resps, r)
		if len(resps) == want {
			// Anything further must not be there: peek once more, briefly.
			_ = conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			if _, err := br.Peek(1); err == nil {
				if extra, err := http.ReadResponse(br, nil); err == nil {
					t.Errorf("unexpected extra response %d", extra.StatusCode)
				}
			} else {
				closed = !errors.Is(err, os.ErrDeadlineExceeded)
			}
			return resps, closed
		}
	}
}

// mustRefuseOnce checks that raw got exactly one response, the status/code
// envelope with Connection: close, and that the server then closed the
// connection, so whatever followed the refused request was never served.
func mustRefuseOnce(t *testing.T, addr, raw string, status int, code string) fxtest.Envelope {
	t.Helper()
	resps, closed := wireExchange(t, addr, raw, 0)
	if len(resps) != 1 {
		for i, r := range resps {
			t.Logf("response %d: %d %q", i+1, r.status, r.body)
		}
		t.Fatalf("got %d responses, want exactly 1 (the refusal)", len(resps))
	}
	env := mustEnvelope(t, resps[0], status, code)
	if !resps[0].close {
		t.Error("the refusal lacks Connection: close")
	}
	if !closed {
		t.Error("the connection stayed open after the refusal")
	}
	return env
}

const smuggled = "GET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n"

// TestFramingRefusesAmbiguousRequests: every request whose end a front
// proxy and fx could disagree on (RFC 9112 6.1, 5.2, RFC 9110 5.1) is
// refused with the 400 envelope and the connection is closed, so the
// request smuggled behind it is never answered. A bare LF ending a line
// is not among them (TestFramingBareLFServed), but cannot hide a
// Transfer-Encoding either.
func TestFramingRefusesAmbiguousRequests(t *testing.T) {
	t.Parallel()
	addr := fxtest.Serve(t, framingApp(fx.Config{}))
	const (
		both    = "The request has both Content-Length and Transfer-Encoding"
		fold    = "The request uses obsolete header line folding"
		name    = "The request has a header field name that is not a token"
		generic = "The request could not be parsed" // fasthttp's own refusal
	)
	for name, tc := range map[string]struct{ raw, msg string }{
		// fx refuses these itself (fasthttp would read them as chunked, or
		// by Content-Length, and answer them).
		"CL then TE chunked":       {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled, both},
		"TE chunked then CL":       {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n" + smuggled, both},
		"CL and TE Chunked (case)": {"POST / HTTP/1.1\r\nHost: a\r\ncontent-length: 5\r\ntransfer-encoding: Chunked\r\n\r\n0\r\n\r\n" + smuggled, both},
		"CL and TE identity":       {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nTransfer-Encoding: identity\r\n\r\n" + smuggled, both},
		"obs-fold (SP)":            {"GET /next HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n" + smuggled, fold},
		"obs-fold (HTAB)":          {"GET /next HTTP/1.1\r\nHost: a\r\nX-A: b\r\n\tc\r\n\r\n" + smuggled, fold},
		"obs-fold hides TE":        {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nX-A: b\r\n Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled, fold},
		"bare LF before TE":        {"POST / HTTP/1.1\r\nHost: a\r\nX-A: b\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n" + smuggled, both},
		"bare LF before a fold":    {"GET /next HTTP/1.1\nHost: a\nX-A: b\n c\r\n\r\n" + smuggled, fold},
		"space in a field name":    {"GET /next HTTP/1.1\r\nHost: a\r\nX A: a\r\n\r\n" + smuggled, name},
		"spaced name hides TE":     {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nX Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled, name},
		// fasthttp v1.77 refuses these already; pinned here.
		"CL and TE gzip,chunked":  {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n" + smuggled, generic},
		"TE gzip,chunked then CL": {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n" + smuggled, generic},
		"CL and TE chunked,gzip":  {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n" + smuggled, generic},
		"two TE headers":          {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled, generic},
		"duplicate differing CL":  {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 36\r\n\r\n" + smuggled, generic},
		"duplicate equal CL":      {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n" + smuggled, generic},
		"CL list":                 {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0, 36\r\n\r\n" + smuggled, generic},
		"HTTP/1.0 with TE and CL": {"POST / HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled, generic},
		"header starts with SP":   {"GET /next HTTP/1.1\r\n Host: a\r\n\r\n" + smuggled, generic},
		"space before the colon":  {"GET /next HTTP/1.1\r\nHost: a\r\nX-A : b\r\n\r\n" + smuggled, generic},
	} {
		t.Run(name, func(t *testing.T) {
			env := mustRefuseOnce(t, addr, tc.raw, 400, fx.ErrorCodes.BadRequest)
			if env.Message != tc.msg {
				t.Errorf("message = %q, want %q", env.Message, tc.msg)
			}
		})
	}
}

// TestFramingBareLFServed: a request line or header line ended by a bare
// LF is served, as fasthttp serves it (RFC 9112 2.2 lets a recipient take
// a single LF as a line end), wherever the request comes: first,
// pipelined behind a request without a body, with a Content-Length body,
// with a chunked body (one carrying the request's CRLF twin among them),
// behind a body larger than the read buffer, or sent later on a reused
// keep-alive connection. Every request is answered and the connection
// stays open. TestFramingParityWithFasthttp compares such streams with raw
// fasthttp's answers.
func TestFramingBareLFServed(t *testing.T) {
	addr := fxtest.Serve(t, framingApp(fx.Config{HeaderLimit: 4096}))
	const (
		bareLine = "GET /next HTTP/1.1\nHost: a\r\n\r\n"
		bareHdr  = "GET /next HTTP/1.1\r\nHost: a\nX-A: b\r\n\r\n"
		bareBoth = "GET /next HTTP/1.1\nHost: a\nX-A: b\r\n\r\n"
	)
	big := strings.Repeat("b", 9000) // over the read buffer of HeaderLimit
	for name, tc := range map[string]struct{ first, body string }{
		"first":                  {"", ""},
		"behind a GET":           {"GET /next HTTP/1.1\r\nHost: a\r\n\r\n", "next"},
		"behind a CL body":       {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", "body=hello"},
		"behind a chunked body":  {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", "body=hello"},
		"behind its CRLF twin":   {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1f\r\nGET /next HTTP/1.1\r\nHost: a\r\n\r\n\r\n0\r\n\r\n", "body=GET /next HTTP/1.1\r\nHost: a\r\n\r\n"},
		"behind a large CL body": {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9000\r\n\r\n" + big, "body=" + big},
	} {
		t.Run(name, func(t *testing.T) {
			want := []string{"next", "next", "next", "SMUGGLED"}
			if tc.first != "" {
				want = append([]string{tc.body}, want...)
			}
			resps, closed := wireExchange(t, addr, tc.first+bareLine+bareHdr+bareBoth+smuggled, len(want))
			if len(resps) != len(want) {
				t.Fatalf("got %d responses (%+v), want %d", len(resps), resps, len(want))
			}
			for i, r := range resps {
				if r.status != 200 || string(r.body) != want[i] {
					t.Errorf("response %d: %d %q, want 200 %q", i+1, r.status, r.body, want[i])
				}
			}
			if closed || resps[len(resps)-1].close {
				t.Error("the keep-alive connection was closed")
			}
		})
	}
	t.Run("keep-alive, sent later", func(t *testing.T) {
		conn := dialBounded(t, addr, 5*time.Second) // a bound, not an assertion
		defer conn.Close()
		br := bufio.NewReader(conn)
		for i, raw := range []string{
			"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9000\r\n\r\n" + big,
			"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nh\r\n1\r\ni\r\n0\r\n\r\n",
			"GET /next HTTP/1.1\r\nHost: a\r\n\r\n", bareLine, bareBoth,
		} {
			_, _ = io.WriteString(conn, raw)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("request %d: %v", i+1, err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("request %d: %d, want 200", i+1, resp.StatusCode)
			}
		}
	})
}

// TestFramingFieldNameBytes: a field name must be a token (RFC 9110 5.1).
// For every byte value b, a request with the header "X<b>A: a" is served
// when b is a token character and refused with the 400 envelope and a
// closed connection otherwise (by fasthttp, or by the guard for a space,
// the one non-token byte fasthttp lets through). CR, LF and ':' are left
// out: they end the line or the name rather than sit inside it.
func TestFramingFieldNameBytes(t *testing.T) {
	addr := fxtest.Serve(t, framingApp(fx.Config{}))
	conn := dialBounded(t, addr, 10*time.Second)
	defer conn.Close()
	br := bufio.NewReader(conn)
	for b := 0; b < 256; b++ {
		c := byte(b)
		if c == '\r' || c == '\n' || c == ':' {
			continue
		}
		raw := "GET /next HTTP/1.1\r\nHost: a\r\nX" + string([]byte{c}) + "A: a\r\n\r\n"
		if !isTchar(c) {
			mustRefuseOnce(t, addr, raw+smuggled, 400, fx.ErrorCodes.BadRequest)
			continue
		}
		// Token bytes: served, one after the other on a keep-alive connection.
		r, err := roundTripRawErr(conn, br, "GET", raw)
		if err != nil {
			t.Fatalf("byte %#x: %v", c, err)
		}
		if r.status != 200 || string(r.body) != "next" {
			t.Errorf("byte %#x (a token character): %d %q, want 200 \"next\"", c, r.status, r.body)
		}
	}
}

// isTchar reports whether c is a token character (RFC 9110 5.6.2).
func isTchar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// TestFramingKeepsWellFramedPipelines: the guard leaves well-framed
// keep-alive traffic alone; both pipelined requests are answered and the
// connection stays open.
func TestFramingKeepsWellFramedPipelines(t *testing.T) {
	t.Parallel()
	addr := fxtest.Serve(t, framingApp(fx.Config{}))
	for name, tc := range map[string]struct {
		raw   string
		first string
	}{
		"chunked then GET": {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" +
			"GET /next HTTP/1.1\r\nHost: a\r\n\r\n", "body=hello"},
		"CL then GET": {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" +
			"GET /next HTTP/1.1\r\nHost: a\r\n\r\n", "body=hello"},
		"CL 0 then GET": {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nX-Note: Transfer-Encoding: chunked\r\n\r\n" +
			"GET /next HTTP/1.1\r\nHost: a\r\n\r\n", "body="},
	} {
		t.Run(name, func(t *testing.T) {
			resps, closed := wireExchange(t, addr, tc.raw, 2)
			if len(resps) != 2 {
				t.Fatalf("got %d responses, want 2", len(resps))
			}
			if resps[0].status != 200 || string(resps[0].body) != tc.first {
				t.Errorf("first: %d %q, want 200 %q", resps[0].status, resps[0].body, tc.first)
			}
			if resps[1].status != 200 || string(resps[1].body) != "next" {
				t.Errorf("second: %d %q, want 200 \"next\"", resps[1].status, resps[1].body)
			}
			if closed || resps[1].close {
				t.Error("the keep-alive connection was closed")
			}
		})
	}
}

// TestFramingExpectContinueOverLimit: a request announcing a body over
// BodyLimit with Expect: 100-continue gets the 413 envelope at once, never
// an interim 100 Continue inviting the client to send the body.
func TestFramingExpectContinueOverLimit(t *testing.T) {
	addr := fxtest.Serve(t, framingApp(fx.Config{BodyLimit: 1024}))
	t.Run("over the limit", func(t *testing.T) {
		// Only the head is sent: the client waits for 100 Continue.
		mustRefuseOnce(t, addr, "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1025\r\n\r\n",
			413, fx.ErrorCodes.PayloadTooLarge)
	})
	t.Run("within the limit", func(t *testing.T) {
		conn := dialBounded(t, addr, 5*time.Second) // a bound, not an assertion
		defer conn.Close()
		_, _ = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 100 {
			t.Fatalf("interim response: %v %v, want 100 Continue", resp, err)
		}
		_, _ = io.WriteString(conn, "hello")
		resp, err = http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(b) != "body=hello" {
			t.Fatalf("%d %q, want 200 body=hello", resp.StatusCode, b)
		}
	})
}

// TestFramingBodyLimitFollowsTheServer: the early 413 uses the Server's
// MaxRequestBodySize, so a limit raised through Server() before Serve is
// the one enforced (the guard must not refuse what fasthttp would read).
func TestFramingBodyLimitFollowsTheServer(t *testing.T) {
	t.Parallel()
	app := framingApp(fx.Config{BodyLimit: 1024})
	app.Server().MaxRequestBodySize = 4096
	addr := fxtest.Serve(t, app)
	body := strings.Repeat("b", 2000)
	resps, _ := wireExchange(t, addr, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2000\r\n\r\n"+body, 1)
	if len(resps) != 1 || resps[0].status != 200 || string(resps[0].body) != "body="+body {
		t.Fatalf("got %d responses (first: %+v), want one 200 echoing the body", len(resps), resps)
	}
	mustRefuseOnce(t, addr, "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 4097\r\n\r\n",
		413, fx.ErrorCodes.PayloadTooLarge)
}
