package fx_test

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
	read := func(method string) (*http.Response, error) {
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		a := strconv.Itoa(resp.StatusCode)
		if resp.StatusCode < 300 {
			a += " " + string(body)
		}
		if resp.Close {
			a += " (close)"
		}
		o.answers = append(o.answers, a)
		return resp, nil
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
			if _, err := read(r.method); err != nil {
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
			if _, err := read(r.method); err != nil {
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
	for _, mode := range []struct {
		name string
		bare bool
	}{{"CRLF", false}, {"bare LF", true}} {
		t.Run(mode.name, func(t *testing.T) {
			// Bounded: the streams carry up to 2 MiB each, and a CPU burst
			// here would slow the phase clock the timeout tests read.
			const scripts = 24
			var wg sync.WaitGroup
			sem := make(chan struct{}, 2) // connections in flight per server
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
					want, err := runParityScript(rawAddr, s)
					if err != nil {
						t.Errorf("script %d, raw fasthttp: %v", id, err)
						return
					}
					got, err := runParityScript(fxAddr, s)
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
	fxAddr, rawAddr := parityServers(t)
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
		t.Run(name, func(t *testing.T) {
			want, err := runParityScript(rawAddr, s)
			if err != nil {
				t.Fatalf("raw fasthttp: %v", err)
			}
			got, err := runParityScript(fxAddr, s)
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
// 400 too, once its read timeout (1 s here) has passed: the same status,
// without the wait. A bare-LF head that fasthttp does end (a CRLF CRLF
// behind it in the same write) is served by both.
func TestFramingLFOnlyHeadAnsweredAtOnce(t *testing.T) {
	app := framingApp(fx.Config{ReadTimeout: 10 * time.Second})
	addr := fxtest.Serve(t, app)
	rawAddr := serveFasthttp(t, &fasthttp.Server{Handler: func(rc *fasthttp.RequestCtx) { rc.SetBodyString("next") }, ReadTimeout: time.Second})

	// ask writes before (a request answered on the same connection first,
	// or nothing), then head, and reads head's answer within bound.
	ask := func(t *testing.T, addr, before, head string, bound time.Duration) (result, bool) {
		t.Helper()
		conn := dialBounded(t, addr, bound) // the assertion: an answer within bound
		defer conn.Close()
		br := bufio.NewReader(conn)
		if before != "" {
			_, _ = io.WriteString(conn, before)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("the request before: %v", err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		_, _ = io.WriteString(conn, head)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("no answer within %v: %v", bound, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		_, err = br.ReadByte()
		closed := err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
		return result{status: resp.StatusCode, header: resp.Header, body: body, close: resp.Close}, closed
	}
	const before = "GET /next HTTP/1.1\r\nHost: a\r\n\r\n"
	for _, head := range []string{
		"GET /next HTTP/1.1\nHost: a\n\n",
		"GET /next HTTP/1.1\r\nHost: a\n\n",
		"GET /next HTTP/1.1\nHost: a\n\r\n",
		"POST / HTTP/1.1\nHost: a\nContent-Length: 5\n\n",
	} {
		for _, b := range []string{"", before} {
			t.Run(fmt.Sprintf("%q after %d request(s)", head, len(b)/len(before)), func(t *testing.T) {
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
	t.Run("ended by a CRLF CRLF behind it", func(t *testing.T) {
		resps, closed := wireExchange(t, addr, "GET /next HTTP/1.1\nHost: a\n\n"+before, 2)
		if len(resps) != 2 || resps[0].status != 200 || resps[1].status != 200 || closed {
			t.Fatalf("got %+v (closed %v), want both served", resps, closed)
		}
	})
}
