package fx_test

// Request framing (internal/conn's guard): ambiguous framing refused once
// with its envelope, what fasthttp serves served alike (the parity test
// against raw fasthttp), pipelines kept.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/valyala/fasthttp"
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
	t.Parallel() // waits on its connections, little CPU
	addr := fxtest.Serve(t, framingApp(fx.Config{HeaderLimit: 4096}))
	const (
		bareLine = "GET /next HTTP/1.1\nHost: a\r\n\r\n"
		bareHdr  = "GET /next HTTP/1.1\r\nHost: a\nX-A: b\r\n\r\n"
		bareBoth = "GET /next HTTP/1.1\nHost: a\nX-A: b\r\n\r\n"
	)
	big := strings.Repeat("b", 9000) // over the read buffer of HeaderLimit
	// Each exchange ends with a peek of 200 ms: they overlap.
	w := &waiting{t: t}
	defer w.Wait()
	for name, tc := range map[string]struct{ first, body string }{
		"first":                  {"", ""},
		"behind a GET":           {"GET /next HTTP/1.1\r\nHost: a\r\n\r\n", "next"},
		"behind a CL body":       {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", "body=hello"},
		"behind a chunked body":  {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", "body=hello"},
		"behind its CRLF twin":   {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1f\r\nGET /next HTTP/1.1\r\nHost: a\r\n\r\n\r\n0\r\n\r\n", "body=GET /next HTTP/1.1\r\nHost: a\r\n\r\n"},
		"behind a large CL body": {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9000\r\n\r\n" + big, "body=" + big},
	} {
		w.Run(name, func(t *testing.T) {
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
	w.Run("keep-alive, sent later", func(t *testing.T) {
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
	t.Parallel() // waits on its connections, little CPU
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
	w := &waiting{t: t} // the exchanges' waits overlap
	defer w.Wait()
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
		w.Run(name, func(t *testing.T) {
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

// Parity with raw fasthttp. What fx adds below the handler (the
// connection layer, the framing guard) must not change how a legitimate
// request stream is answered: every exchange below is sent to an App and
// to a raw fasthttp.Server with the same limits, both on 127.0.0.1, and
// the answers must be the same: status, body (an error's body is compared
// by status only, fx's being its envelope) and whether the connection was
// kept or closed.

// parityAnswer is what a request is answered: "<method> <path> len=<n>
// sum=<sha256 prefix>" of the request it received, the same bytes from
// both servers.
func parityAnswer(method, path string, body []byte) string {
	sum := sha256.Sum256(body)
	return fmt.Sprintf("%s %s len=%d sum=%s", method, path, len(body), hex.EncodeToString(sum[:6]))
}

// parityServers starts an App and a raw fasthttp.Server answering
// parityAnswer on /r/:i (GET and POST) with fx's default body and header
// limits, and returns their addresses. Neither has timeouts: the
// scripts' own deadlines bound them, and an App with timeouts would run
// the process-wide phase clock (internal/conn/deadline.go) through these
// streams' CPU bursts, which it remembers as clock lag for a minute or
// two and adds to the cuts the timeout tests measure afterwards.
func parityServers(t testing.TB) (fxAddr, rawAddr string) {
	t.Helper()
	app := quiet(fx.Config{ReadTimeout: -1, WriteTimeout: -1, IdleTimeout: -1})
	h := func(c *fx.Ctx) error { return c.String(200, parityAnswer(c.Method(), c.Path(), c.Body())) }
	app.Get("/r/:i", h)
	app.Post("/r/:i", h)
	return fxtest.Serve(t, app), serveFasthttp(t, &fasthttp.Server{
		Handler: func(rc *fasthttp.RequestCtx) {
			rc.SetContentType("text/plain; charset=utf-8")
			rc.SetBodyString(parityAnswer(string(rc.Method()), string(rc.Path()), rc.Request.Body()))
		},
		MaxRequestBodySize: fx.DefaultBodyLimit,
		ReadBufferSize:     fx.DefaultHeaderLimit,
	})
}

// serveFasthttp is fxtest.Serve for a bare fasthttp.Server, the reference
// the framing tests compare fx with: it serves srv on a loopback port
// until the test ends and returns its address.
func serveFasthttp(t testing.TB, srv *fasthttp.Server) string {
	t.Helper()
	ln := listenLoopback(t)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = srv.Shutdown()
		<-served
	})
	return ln.Addr().String()
}

// parityRequest is one generated request.
type parityRequest struct {
	method   string
	path     string
	body     []byte
	chunked  bool // Transfer-Encoding: chunked, else Content-Length (when there is a body)
	chunks   []int
	bareLine bool // the request line ends with a bare LF
	bareHdr  bool // the header lines but the last end with a bare LF
	close    bool // Connection: close
	expect   bool // Expect: 100-continue (sent as a step of its own)
}

// head is the request's line and header block. The last header line and
// the blank line always end with CRLF: fasthttp ends a block at a bare-LF
// blank line only once a CRLF CRLF has arrived too, which depends on how
// the bytes fall into reads (TestFramingLFOnlyHeadAnsweredAtOnce is about
// that head).
func (r parityRequest) head() []byte {
	var b bytes.Buffer
	eol := func(bare bool) {
		if bare {
			b.WriteString("\n")
		} else {
			b.WriteString("\r\n")
		}
	}
	b.WriteString(r.method + " " + r.path + " HTTP/1.1")
	eol(r.bareLine)
	b.WriteString("Host: parity")
	eol(r.bareHdr)
	b.WriteString("User-Agent: parity-test")
	eol(r.bareHdr)
	if r.close {
		b.WriteString("Connection: close")
		eol(r.bareHdr)
	}
	if r.expect {
		b.WriteString("Expect: 100-continue")
		eol(r.bareHdr)
	}
	if r.method == "POST" {
		if r.chunked {
			b.WriteString("Transfer-Encoding: chunked")
		} else {
			b.WriteString("Content-Length: " + strconv.Itoa(len(r.body)))
		}
		eol(r.bareHdr)
	}
	b.WriteString("X-Last: 1\r\n\r\n")
	return b.Bytes()
}

// payload is the request's body as sent: its bytes, or its chunks.
func (r parityRequest) payload() []byte {
	if !r.chunked {
		return r.body
	}
	var b bytes.Buffer
	rest := r.body
	for _, n := range r.chunks {
		n = min(n, len(rest))
		if n == 0 {
			break
		}
		fmt.Fprintf(&b, "%x\r\n", n)
		b.Write(rest[:n])
		b.WriteString("\r\n")
		rest = rest[n:]
	}
	if len(rest) > 0 {
		fmt.Fprintf(&b, "%x\r\n", len(rest))
		b.Write(rest)
		b.WriteString("\r\n")
	}
	b.WriteString("0\r\n\r\n")
	return b.Bytes()
}

// parityScript is one connection: steps written one after the other,
// each step's requests in a single write (a pipeline), its answers read
// before the next step.
type parityScript [][]parityRequest

// paritySizes are the body sizes drawn from: empty, small, around the
// read buffer, and up to 1 MiB.
var paritySizes = []int{0, 1, 5, 100, 4095, 8192, 8193, 16 << 10, 20 << 10, 64<<10 + 3, 256 << 10, 1 << 20}

// genParityScript draws a connection: 1-4 steps of 1-6 requests, bodies
// of paritySizes (about 2 MiB a connection at most), either framing, bare
// LFs, a 100-continue request as a step of its own, and sometimes a last
// request with Connection: close.
func genParityScript(rng *rand.Rand, id int) parityScript {
	var s parityScript
	steps := 1 + rng.IntN(4)
	budget := 2 << 20
	n := 0
	for st := 0; st < steps; st++ {
		var step []parityRequest
		if rng.IntN(5) == 0 { // 100-continue: one request, its body sent after the 100
			size := max(paritySizes[rng.IntN(len(paritySizes))], 1)
			budget -= size
			s = append(s, []parityRequest{genParityRequest(rng, id, &n, size, true)})
			continue
		}
		for k := 1 + rng.IntN(6); k > 0; k-- {
			size := 0
			if rng.IntN(3) > 0 {
				size = paritySizes[rng.IntN(len(paritySizes))]
				if size > budget {
					size = rng.IntN(100)
				}
				budget -= size
			}
			step = append(step, genParityRequest(rng, id, &n, size, false))
		}
		s = append(s, step)
	}
	if rng.IntN(4) == 0 {
		last := s[len(s)-1]
		last[len(last)-1].close = true
	}
	return s
}

func genParityRequest(rng *rand.Rand, id int, n *int, size int, expect bool) parityRequest {
	*n++
	r := parityRequest{
		method:   "GET",
		path:     fmt.Sprintf("/r/%d-%d", id, *n),
		bareLine: rng.IntN(3) == 0,
		bareHdr:  rng.IntN(3) == 0,
		expect:   expect,
	}
	if size > 0 || expect || rng.IntN(2) == 0 {
		r.method = "POST"
		r.body = make([]byte, size)
		for i := range r.body {
			// Bytes that look like framing, so a guard that scans bodies
			// would trip on them: CR, LF, and request lines.
			r.body[i] = "GET /r/x HTTP/1.1\r\n\n\r\n0123456789"[rng.IntN(32)]
		}
		r.chunked = rng.IntN(2) == 0
		for c := rng.IntN(4); c > 0; c-- {
			r.chunks = append(r.chunks, 1+rng.IntN(max(size, 1)))
		}
	}
	return r
}

// parityOutcome is how a server answered a script: per request its
// status and body (the body only for a success), then whether the
// connection was closed at the end.
type parityOutcome struct {
	answers []string
	closed  bool
}

func (o parityOutcome) String() string {
	return fmt.Sprintf("%d answers %q, closed %v", len(o.answers), o.answers, o.closed)
}

// runParityScript plays s on a new connection to addr.
func runParityScript(addr string, s parityScript) (parityOutcome, error) {
	var o parityOutcome
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return o, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second)) // a bound, not an assertion
	br := bufio.NewReader(conn)
	read := func(method string) error {
		r, err := readResult(br, method)
		if err != nil {
			return err
		}
		a := strconv.Itoa(r.status)
		if r.status < 300 {
			a += " " + string(r.body)
		}
		if r.close {
			a += " (close)"
		}
		o.answers = append(o.answers, a)
		return nil
	}
	for _, step := range s {
		if step[0].expect {
			r := step[0]
			if _, err := conn.Write(r.head()); err != nil {
				o.closed = true
				return o, nil
			}
			resp, err := http.ReadResponse(br, &http.Request{Method: r.method})
			if err != nil {
				o.closed = true
				return o, nil
			}
			if resp.StatusCode != 100 {
				// A final answer instead of the interim one.
				body, _ := io.ReadAll(resp.Body)
				o.answers = append(o.answers, fmt.Sprintf("%d without 100 (%d bytes)", resp.StatusCode, len(body)))
				o.closed = true
				return o, nil
			}
			o.answers = append(o.answers, "100")
			if _, err := conn.Write(r.payload()); err != nil {
				o.closed = true
				return o, nil
			}
			if err := read(r.method); err != nil {
				o.closed = true
				return o, nil
			}
			continue
		}
		var wire bytes.Buffer
		for _, r := range step {
			wire.Write(r.head())
			wire.Write(r.payload())
		}
		// Written by another goroutine: a server answering as it reads
		// must not be blocked by a client that only writes.
		werr := make(chan error, 1)
		go func() { _, err := conn.Write(wire.Bytes()); werr <- err }()
		for _, r := range step {
			if err := read(r.method); err != nil {
				o.closed = true
				<-werr
				return o, nil
			}
		}
		if err := <-werr; err != nil {
			o.closed = true
			return o, nil
		}
	}
	// Kept or closed: a closed connection reads EOF at once, a kept one
	// times out.
	_ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	_, err = br.ReadByte()
	o.closed = err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
	if err == nil {
		return o, errors.New("bytes after the last answer")
	}
	return o, nil
}

// TestFramingParityWithFasthttp: generated request streams (content-length
// and chunked bodies from 0 to 1 MiB, 100-continue, pipelines, keep-alive
// reuse, Connection: close) get the same answers from an App as from raw
// fasthttp: with CRLF line ends only, and with bare-LF request and header
// lines mixed in. The seeds are fixed, so a failure reproduces; a script
// whose answers differ is printed.
func TestFramingParityWithFasthttp(t *testing.T) {
	fxAddr, rawAddr := parityServers(t)
	w := &waiting{t: t} // the two modes' waits overlap
	defer w.Wait()
	for _, mode := range []struct {
		name string
		bare bool
	}{{"CRLF", false}, {"bare LF", true}} {
		w.Run(mode.name, func(t *testing.T) {
			// Bounded: the streams carry up to 2 MiB each, and a CPU burst
			// here would slow the phase clock the timeout tests read. Each
			// script ends with a 300 ms wait on a kept connection, so the
			// 24 scripts take seconds: without FX_SLOW_TESTS the first 6
			// run (.ci/run sets it and runs them all).
			scripts := 24
			if os.Getenv("FX_SLOW_TESTS") == "" {
				scripts = 6
			}
			var wg sync.WaitGroup
			inFlight := 3 // scripts per server and mode
			if scripts <= 6 {
				inFlight = scripts // the short run's waits all overlap
			}
			sem := make(chan struct{}, inFlight)
			for id := range scripts {
				rng := rand.New(rand.NewPCG(32, uint64(id)))
				s := genParityScript(rng, id)
				if !mode.bare {
					for _, step := range s {
						for i := range step {
							step[i].bareLine, step[i].bareHdr = false, false
						}
					}
				}
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					// Both servers at once: the script's waits overlap.
					type outcome struct {
						o   parityOutcome
						err error
					}
					raw := make(chan outcome, 1)
					go func() {
						o, err := runParityScript(rawAddr, s)
						raw <- outcome{o, err}
					}()
					got, err := runParityScript(fxAddr, s)
					r := <-raw
					want := r.o
					if r.err != nil {
						t.Errorf("script %d, raw fasthttp: %v", id, r.err)
						return
					}
					if err != nil {
						t.Errorf("script %d, fx: %v", id, err)
						return
					}
					if got.String() != want.String() {
						t.Errorf("script %d:\n fx:       %v\n fasthttp: %v\n script: %s", id, got, want, describeScript(s))
					}
				}()
			}
			wg.Wait()
		})
	}
}

// describeScript is a short account of a script for a failure message.
func describeScript(s parityScript) string {
	var b strings.Builder
	for i, step := range s {
		fmt.Fprintf(&b, "[step %d:", i+1)
		for _, r := range step {
			fmt.Fprintf(&b, " %s %s body=%d chunked=%v bareLine=%v bareHdr=%v close=%v expect=%v;",
				r.method, r.path, len(r.body), r.chunked, r.bareLine, r.bareHdr, r.close, r.expect)
		}
		b.WriteString("] ")
	}
	return b.String()
}

// TestFramingParityCases: the streams the outside attack reported, by
// hand, against both servers: a bare-LF request line behind a chunked
// body carrying its CRLF twin, chunked bodies then a request on the
// reused connection, and bare-LF lines behind each kind of body.
func TestFramingParityCases(t *testing.T) {
	t.Parallel() // waits on its connections, little CPU
	fxAddr, rawAddr := parityServers(t)
	w := &waiting{t: t} // each script ends with a 300 ms wait on a kept connection: they overlap
	defer w.Wait()
	chunkedTwin := parityRequest{method: "POST", path: "/r/twin", chunked: true,
		body: []byte("GET /r/next HTTP/1.1\r\nHost: parity\r\n\r\n")}
	bare := parityRequest{method: "GET", path: "/r/next", bareLine: true}
	bareHdr := parityRequest{method: "GET", path: "/r/next", bareLine: true, bareHdr: true}
	chunked := parityRequest{method: "POST", path: "/r/c", chunked: true, chunks: []int{3, 1},
		body: []byte("hello\r\n0\r\n\r\n")}
	clBody := parityRequest{method: "POST", path: "/r/cl", body: bytes.Repeat([]byte("b\n"), 5000)}
	for name, s := range map[string]parityScript{
		"bare-LF line behind a chunked CRLF twin": {{chunkedTwin, bare}},
		"chunked bodies, then reuse":              {{chunked, chunked}, {parityRequest{method: "GET", path: "/r/after"}}, {bare}},
		"bare LFs behind a large CL body":         {{clBody, bare, bareHdr}, {bare}},
		"bare LF first, then pipelined":           {{bare, chunked, bareHdr, clBody}},
	} {
		w.Run(name, func(t *testing.T) {
			// Both servers at once: the script's waits overlap.
			var want parityOutcome
			rawErr := make(chan error, 1)
			go func() {
				var err error
				want, err = runParityScript(rawAddr, s)
				rawErr <- err
			}()
			got, err := runParityScript(fxAddr, s)
			if err := <-rawErr; err != nil {
				t.Fatalf("raw fasthttp: %v", err)
			}
			if err != nil {
				t.Fatalf("fx: %v", err)
			}
			if got.String() != want.String() {
				t.Errorf("\n fx:       %v\n fasthttp: %v", got, want)
			}
			for _, a := range want.answers {
				if !strings.HasPrefix(a, "200 ") {
					t.Errorf("fasthttp answered %q: the case is not one fasthttp serves", a)
				}
			}
		})
	}
}

// TestFramingPipelineClientLargeBodies: fasthttp.PipelineClient sending
// 300 requests with 20 KiB bodies on one connection gets 300 answers,
// each to its own request, from an App as from raw fasthttp.
func TestFramingPipelineClientLargeBodies(t *testing.T) {
	requireSlow(t) // seconds of real-time waits: .ci/run runs it
	fxAddr, rawAddr := parityServers(t)
	for _, tc := range []struct{ name, addr string }{{"fasthttp", rawAddr}, {"fx", fxAddr}} {
		t.Run(tc.name, func(t *testing.T) {
			pc := &fasthttp.PipelineClient{Addr: tc.addr, MaxConns: 1, MaxPendingRequests: 300,
				ReadTimeout: 20 * time.Second, WriteTimeout: 20 * time.Second}
			const n = 300
			errs := make(chan error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
					defer fasthttp.ReleaseRequest(req)
					defer fasthttp.ReleaseResponse(resp)
					path := fmt.Sprintf("/r/%d", i)
					req.SetRequestURI("http://parity" + path)
					req.Header.SetMethod("POST")
					body := bytes.Repeat([]byte{byte('a' + i%26)}, 20<<10)
					body = append(body, []byte(strconv.Itoa(i))...)
					req.SetBody(body)
					if err := pc.DoTimeout(req, resp, 30*time.Second); err != nil {
						errs <- fmt.Errorf("request %d: %v", i, err)
						return
					}
					if want := parityAnswer("POST", path, body); resp.StatusCode() != 200 || string(resp.Body()) != want {
						errs <- fmt.Errorf("request %d: %d %q, want 200 %q", i, resp.StatusCode(), resp.Body(), want)
					}
				}()
			}
			wg.Wait()
			close(errs)
			failed := 0
			for err := range errs {
				if failed++; failed <= 5 {
					t.Error(err)
				}
			}
			if failed > 0 {
				t.Errorf("%d of %d requests failed", failed, n)
			}
		})
	}
}

// TestFramingLFOnlyHeadAnsweredAtOnce: a head ended by a blank line made
// of a bare LF, which fasthttp does not end until a CRLF CRLF arrives, is
// answered at once with the 400 envelope and a closed connection, on a new
// connection and on a reused one, instead of at the read timeout (10 s
// here; the client gives up after 3). Raw fasthttp answers such a head
// 400 too, once its read timeout (250 ms here) has passed: the same status,
// without the wait. A bare-LF head that fasthttp does end (a CRLF CRLF
// behind it in the same write) is served by both.
func TestFramingLFOnlyHeadAnsweredAtOnce(t *testing.T) {
	t.Parallel() // waits on its connections, little CPU
	app := framingApp(fx.Config{ReadTimeout: 10 * time.Second})
	addr := fxtest.Serve(t, app)
	rawAddr := serveFasthttp(t, &fasthttp.Server{Handler: func(rc *fasthttp.RequestCtx) { rc.SetBodyString("next") }, ReadTimeout: 250 * time.Millisecond})

	// ask writes before (a request answered on the same connection first,
	// or nothing), then head, and reads head's answer within bound.
	ask := func(t *testing.T, addr, before, head string, bound time.Duration) (result, bool) {
		t.Helper()
		conn := dialBounded(t, addr, bound) // the assertion: an answer within bound
		defer conn.Close()
		br := bufio.NewReader(conn)
		if before != "" {
			_, _ = io.WriteString(conn, before)
			if _, err := readResult(br, "GET"); err != nil {
				t.Fatalf("the request before: %v", err)
			}
		}
		_, _ = io.WriteString(conn, head)
		r, err := readResult(br, "GET")
		if err != nil {
			t.Fatalf("no answer within %v: %v", bound, err)
		}
		_, err = br.ReadByte()
		closed := err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
		return r, closed
	}
	const before = "GET /next HTTP/1.1\r\nHost: a\r\n\r\n"
	w := &waiting{t: t} // raw fasthttp's read timeouts and the last peek overlap
	defer w.Wait()
	for _, head := range []string{
		"GET /next HTTP/1.1\nHost: a\n\n",
		"GET /next HTTP/1.1\r\nHost: a\n\n",
		"GET /next HTTP/1.1\nHost: a\n\r\n",
		"POST / HTTP/1.1\nHost: a\nContent-Length: 5\n\n",
	} {
		for _, b := range []string{"", before} {
			w.Run(fmt.Sprintf("%q after %d request(s)", head, len(b)/len(before)), func(t *testing.T) {
				r, closed := ask(t, addr, b, head, 3*time.Second)
				env := mustEnvelope(t, r, 400, fx.ErrorCodes.BadRequest)
				if !strings.Contains(env.Message, "bare LF") {
					t.Errorf("message %q", env.Message)
				}
				if !r.close || !closed {
					t.Error("the connection stayed open after the refusal")
				}
				if b == "" {
					if w, _ := ask(t, rawAddr, b, head, 5*time.Second); w.status != r.status {
						t.Errorf("raw fasthttp answered %d after its read timeout, fx %d", w.status, r.status)
					}
				}
			})
		}
	}
	w.Run("ended by a CRLF CRLF behind it", func(t *testing.T) {
		resps, closed := wireExchange(t, addr, "GET /next HTTP/1.1\nHost: a\n\n"+before, 2)
		if len(resps) != 2 || resps[0].status != 200 || resps[1].status != 200 || closed {
			t.Fatalf("got %+v (closed %v), want both served", resps, closed)
		}
	})
}
