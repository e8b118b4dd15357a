package fx_test

// The raw-wire helpers of the root tests, in one place: requests written
// and answers read byte by byte over loopback or in-memory connections.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/valyala/fasthttp/fasthttputil"
)

// waiting runs subtests that mostly wait in real time (a read deadline,
// the peek for an extra response, a peer's timeout) at the same time, each
// on its own goroutine, so their waits overlap. Unlike t.Parallel, they
// take none of the -parallel slots (GOMAXPROCS by default) that the
// CPU-bound parallel tests share, and they run within the calling test.
// Wait returns when all have ended.
type waiting struct {
	t  *testing.T
	wg sync.WaitGroup
}

// Run starts f as the subtest name and returns at once.
func (w *waiting) Run(name string, f func(t *testing.T)) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.t.Run(name, f)
	}()
}

// Wait waits for every subtest Run started.
func (w *waiting) Wait() { w.wg.Wait() }

// trickle is a slow client: it writes b to conn every 20 ms until stop is
// closed or a write fails.
func trickle(conn net.Conn, b string, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(20 * time.Millisecond):
			if _, err := io.WriteString(conn, b); err != nil {
				return
			}
		}
	}
}

// dialMem opens a connection to ln, closed when the test ends, and returns
// it with a reader over it.
func dialMem(t testing.TB, ln *fasthttputil.InmemoryListener) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := ln.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, bufio.NewReader(conn)
}

// serveMem serves app with app.Serve (the production path, listener
// wrapper included) on an in-memory listener, and shuts it down at the end
// of the test.
func serveMem(t testing.TB, app *fx.App) *fasthttputil.InmemoryListener {
	t.Helper()
	ln := fasthttputil.NewInmemoryListener()
	served := serveOn(app, ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = app.ShutdownWithContext(ctx)
		<-served
	})
	return ln
}

// eachEnvelope sends each raw request (method tells the response
// reader what was asked) on its own connection to ln, in a subtest named
// by its key, and requires the envelope status/code for every one.
func eachEnvelope(t *testing.T, ln *fasthttputil.InmemoryListener, method string, raws map[string]string, status int, code string) {
	t.Helper()
	for name, raw := range raws {
		t.Run(name, func(t *testing.T) {
			conn, br := dialMem(t, ln)
			w := roundTripRaw(t, conn, br, method, raw)
			mustEnvelope(t, w, status, code)
		})
	}
}

// roundTripRaw writes raw on conn and reads one response to a request of
// the given method, body included, bounded by a generous deadline.
func roundTripRaw(t testing.TB, conn net.Conn, br *bufio.Reader, method, raw string) result {
	t.Helper()
	w, err := roundTripRawErr(conn, br, method, raw)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// roundTripRawErr is roundTripRaw for goroutines other than the test's.
func roundTripRawErr(conn net.Conn, br *bufio.Reader, method, raw string) (result, error) {
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if raw != "" {
		go func() { _, _ = conn.Write([]byte(raw)) }() // a refused write shows as a read error
	}
	return readResult(br, method)
}

// errBody marks readResult's failures to read a body whose head was read.
var errBody = errors.New("reading the body")

// readResult reads from br one response to a request of method, body
// included (net/http's reader: the tests' wire check is a second opinion
// on fasthttp's writer). Its errors wrap the reader's, and errBody when
// the head was read.
func readResult(br *bufio.Reader, method string) (result, error) {
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		return result{}, fmt.Errorf("reading the response: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return result{}, fmt.Errorf("%w: %w", errBody, err)
	}
	return result{resp.StatusCode, resp.Header, body, resp.Close}, nil
}

// memConn is an in-memory net.Conn for fasthttp.Server.ServeConn: reads
// return the input and then io.EOF (a client that sent its bytes and
// half-closed), writes are collected. Deadlines are ignored, so an
// incomplete request ends at once with EOF instead of waiting for
// ReadTimeout: this keeps fuzzing fast and deterministic.
type memConn struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (c *memConn) Read(p []byte) (int, error) { return c.in.Read(p) }

func (c *memConn) Write(p []byte) (int, error) { return c.out.Write(p) }

func (c *memConn) Close() error { return nil }

func (c *memConn) LocalAddr() net.Addr { return memAddr{} }

func (c *memConn) RemoteAddr() net.Addr { return memAddr{} }

func (c *memConn) SetDeadline(time.Time) error { return nil }

func (c *memConn) SetReadDeadline(time.Time) error { return nil }

func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

type memAddr struct{}

func (memAddr) Network() string { return "mem" }

func (memAddr) String() string { return "127.0.0.1:1" }

// exchangeRaw serves raw as one client connection's whole input with the
// App's fasthttp server and returns everything the server wrote.
func exchangeRaw(app *fx.App, raw []byte) []byte {
	_ = app.Boot() // a failed boot answers with its envelope
	c := &memConn{in: bytes.NewReader(raw)}
	_ = app.Server().ServeConn(c) // the output is what is checked
	return c.out.Bytes()
}

// parseWire splits out into HTTP/1.1 responses with
// fxtest.ReadResponses. It fails when the bytes are not a sequence of
// well-formed responses. Responses to HEAD requests have no body and
// cannot be framed without the request, so callers keep HEAD out of the
// input.
func parseWire(out []byte) ([]result, error) {
	rs, err := fxtest.ReadResponses(nil, out)
	ws := make([]result, len(rs))
	for i, r := range rs {
		h := r.Header()
		ws[i] = result{r.Status, h, r.Body, strings.EqualFold(h.Get("Connection"), "close")}
	}
	return ws, err
}

// checkWire checks every response in out: well-formed, and each error
// status carries a valid envelope.
func checkWire(out []byte, appCodes map[string]int) ([]result, error) {
	ws, err := parseWire(out)
	if err != nil {
		return ws, err
	}
	for _, w := range ws {
		if w.status >= 400 {
			if _, err := fxtest.CheckEnvelope(w.status, w.header, w.body, appCodes); err != nil {
				return ws, err
			}
		}
	}
	return ws, nil
}

// dialBounded connects to addr over TCP, failing the test when it cannot,
// with bound as the connection's deadline: a test whose behaviour under
// test is broken fails there instead of hanging. The caller closes it.
func dialBounded(t testing.TB, addr string, bound time.Duration) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(bound))
	return conn
}

// accepts reports whether something accepts a TCP connection on addr
// (the connection is closed at once): how a test sees that a listener
// was closed.
func accepts(addr string) bool {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// hammerConns opens clients connections to ln at once and sends on each
// the requests raw(g, i), i < n, in turn (g numbers the connection),
// reading every response; then, when not nil, the connection's goroutine
// runs after. Failures are reported with t.Error; it returns when every
// connection is done.
func hammerConns(t testing.TB, ln *fasthttputil.InmemoryListener, clients, n int, raw func(g, i int) string, after func()) {
	var wg sync.WaitGroup
	for g := range clients {
		wg.Go(func() {
			conn, err := ln.Dial()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			for i := range n {
				if _, err := roundTripRawErr(conn, br, "GET", raw(g, i)); err != nil {
					t.Error(err)
					return
				}
			}
			if after != nil {
				after()
			}
		})
	}
	wg.Wait()
}

// rawExchange writes the chunks to a fresh connection (pausing between them
// when pause > 0) and reads one response.
func rawExchange(t *testing.T, addr string, pause time.Duration, chunks ...string) result {
	t.Helper()
	conn := dialBounded(t, addr, 10*time.Second) // a bound, not an assertion
	defer conn.Close()
	go func() {
		for _, c := range chunks {
			if _, err := io.WriteString(conn, c); err != nil {
				return // the server may close early; the response says why
			}
			if pause > 0 {
				time.Sleep(pause)
			}
		}
	}()
	r, err := readResult(bufio.NewReader(conn), "GET")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// roundTrip sends idleRequest on c and reads the whole response, which
// must be a 200 (roundTripRawErr: the connection's deadline is 10 s on).
func roundTrip(c net.Conn, br *bufio.Reader) error {
	r, err := roundTripRawErr(c, br, "GET", idleRequest)
	if err == nil && r.status != 200 {
		err = fmt.Errorf("status %d", r.status)
	}
	return err
}

// keepAlive dials addr and returns a function that sends one GET /hello on
// the same connection and fails the test unless it is answered 200.
func keepAlive(t *testing.T, addr string) (net.Conn, func()) {
	t.Helper()
	c := dialBounded(t, addr, 10*time.Second)
	t.Cleanup(func() { c.Close() })
	br := bufio.NewReader(c)
	return c, func() {
		t.Helper()
		if err := roundTrip(c, br); err != nil {
			t.Fatal(err)
		}
	}
}

// wireExchange writes raw to a fresh connection in a single write and reads
// responses until it has want of them, the server closes the connection
// (closed is then true) or no byte arrives for 2 s.
func wireExchange(t *testing.T, addr, raw string, want int) (resps []result, closed bool) {
	t.Helper()
	conn := dialBounded(t, addr, 5*time.Second) // the write's bound; each read sets its own
	defer conn.Close()
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

// wireEnvelope is mustEnvelope without the catalog: r has status, the
// JSON content type and the envelope of code in the wire format, but
// neither the catalog's status for code nor a production 500's silence is
// required (a development App, whose 500 says what failed; a test that
// rewrites fx.ErrorStatus).
func wireEnvelope(t testing.TB, r result, status int, code string) fxtest.Envelope {
	t.Helper()
	if r.status != status {
		t.Errorf("status = %d, want %d (body %q)", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	return checkEnvelopeBody(t, r.body, code)
}
