package fx_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/nethttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
)

func TestDefaultLimits(t *testing.T) {
	cfg := fx.New().Config()
	if cfg.BodyLimit != 4<<20 || cfg.HeaderLimit != 8<<10 || cfg.ReadTimeout != 10*time.Second ||
		cfg.WriteTimeout != 15*time.Second || cfg.IdleTimeout != 60*time.Second ||
		cfg.Concurrency <= 0 || cfg.Concurrency > 256*1024 { // clamped by RLIMIT_NOFILE: TestConnDefaultConcurrencyFollowsNofile

		t.Fatalf("defaults changed: %+v (update the docs in app.go and the README)", cfg)
	}
	srv := fx.New().Server()
	if srv.MaxRequestBodySize != cfg.BodyLimit || srv.ReadBufferSize != cfg.HeaderLimit {
		t.Fatalf("server does not apply the config: %+v", srv)
	}
	// The timeouts are the connections' (internal/conn/deadline.go; the
	// Test*Timeout* tests below serve through them): fasthttp's own
	// would move each socket's deadlines three times per request.
	if srv.ReadTimeout != 0 || srv.WriteTimeout != 0 || srv.IdleTimeout != 0 {
		t.Fatalf("fasthttp's timeouts are set (%v, %v, %v); fx enforces Config's itself",
			srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
	if srv.Concurrency <= cfg.Concurrency {
		t.Fatalf("fasthttp's own limit (%d) must stay above Config.Concurrency (%d), or its raw text 503 fires first",
			srv.Concurrency, cfg.Concurrency)
	}
	if srv.ErrorHandler == nil {
		t.Fatalf("no transport error handler")
	}
}

func TestBodyLimit(t *testing.T) {
	app := quiet(fx.Config{BodyLimit: 1024})
	app.Put("/echo", func(c *fx.Ctx) error { return c.Send(200, "application/octet-stream", c.Body()) })
	eachEnvelope(t, serveMem(t, app), "PUT", map[string]string{
		"content-length": "PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2048\r\n\r\n" + strings.Repeat("x", 2048),
		"chunked":        "PUT /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n" + strings.Repeat("x", 2048) + "\r\n0\r\n\r\n",
		"announced only": "PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999\r\n\r\n",
	}, 413, fx.ErrorCodes.PayloadTooLarge)
	// At the limit it passes.
	w := do(t, app, "PUT", "/echo", strings.Repeat("y", 1024))
	if w.status != 200 || len(w.body) != 1024 {
		t.Fatalf("a body at the limit: %d, %d bytes", w.status, len(w.body))
	}
}

func TestHeaderLimit(t *testing.T) {
	app := quiet(fx.Config{HeaderLimit: 1024})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	eachEnvelope(t, serveMem(t, app), "GET", map[string]string{
		"one big header": "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("b", 2048) + "\r\n\r\n",
		"many headers":   "GET / HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-H: 0123456789\r\n", 200) + "\r\n",
		"long URL":       "GET /" + strings.Repeat("u", 2048) + " HTTP/1.1\r\nHost: a\r\n\r\n",
	}, 431, fx.ErrorCodes.HeadersTooLarge)
}

// eachMemoryMode runs f with fx's server as configured and with fasthttp's
// ReduceMemoryUsage on (README › Performance, idle memory), under which
// fasthttp releases a connection's buffers between requests and waits for
// the next one with a one-byte read: the timeouts of the connection layer
// (internal/conn/deadline.go) must hold either way.
func eachMemoryMode(t *testing.T, f func(t *testing.T, reduce bool)) {
	for _, reduce := range []bool{false, true} {
		t.Run(fmt.Sprintf("ReduceMemoryUsage=%v", reduce), func(t *testing.T) { f(t, reduce) })
	}
}

func TestSlowLorisIsCutOffByReadTimeout(t *testing.T) {
	t.Parallel()
	eachMemoryMode(t, testSlowLoris)
}

func testSlowLoris(t *testing.T, reduce bool) {
	t.Parallel()
	app := quiet(fx.Config{ReadTimeout: 100 * time.Millisecond})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	app.Server().ReduceMemoryUsage = reduce
	ln := serveMem(t, app)
	for name, part := range map[string]string{
		"trickled headers": "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n",
		"trickled body":    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n{\"a\":",
	} { // a client that sends nothing at all is closed quietly: TestSilentClientClosedQuietly

		t.Run(name, func(t *testing.T) {
			t.Parallel()
			conn, br := dialMem(t, ln)
			// Keep trickling a byte at a time: the read timeout counts from
			// the first byte, not from the last.
			stop := make(chan struct{})
			defer close(stop)
			if part != "" {
				go func() {
					_, _ = conn.Write([]byte(part))
					trickle(conn, "X", stop)
				}()
			}
			w := roundTripRaw(t, conn, br, "GET", "")
			mustEnvelope(t, w, 408, fx.ErrorCodes.RequestTimeout)
			if !w.close {
				t.Fatalf("the slow client must be disconnected")
			}
			if _, err := br.ReadByte(); err == nil {
				t.Fatalf("the connection stayed open after the 408")
			}
		})
	}
}

func TestIdleTimeoutClosesKeepAliveQuietly(t *testing.T) {
	t.Parallel()
	eachMemoryMode(t, testIdleTimeout)
}

func testIdleTimeout(t *testing.T, reduce bool) {
	app := quiet(fx.Config{IdleTimeout: 50 * time.Millisecond})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	app.Server().ReduceMemoryUsage = reduce
	ln := serveMem(t, app)
	conn, br := dialMem(t, ln)
	for i := range 3 { // keep-alive: under ReduceMemoryUsage each request after the first starts with the one-byte read
		if w := roundTripRaw(t, conn, br, "GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); w.status != 200 {
			t.Fatalf("request %d: %d", i+1, w.status)
		}
	}
	// No second request: the server closes the connection without writing
	// anything (no stray 408 on an idle keep-alive connection).
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	rest, err := io.ReadAll(br)
	if err != nil || len(rest) != 0 {
		t.Fatalf("idle connection: %q, %v; want a quiet close", rest, err)
	}
}

func TestWriteTimeoutFreesTheConnection(t *testing.T) {
	t.Parallel()
	// Over TCP: an in-memory pipe buffers any amount, so a client that does
	// not read would never block the server there.
	app := quiet(fx.Config{WriteTimeout: 100 * time.Millisecond})
	big := bytes.Repeat([]byte("z"), 64<<20) // far more than loopback socket buffers hold
	app.Get("/big", func(c *fx.Ctx) error { return c.Send(200, "application/octet-stream", big) })
	conn := dialBounded(t, fxtest.Serve(t, app), 10*time.Second) // a bound
	defer conn.Close()
	_, _ = conn.Write([]byte("GET /big HTTP/1.1\r\nHost: a\r\n\r\n"))
	// The client never reads. The server must give up and close.
	deadline := time.Now().Add(10 * time.Second)
	for app.Server().GetOpenConnectionsCount() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a client that does not read holds its connection past WriteTimeout")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMalformedRequestsGetEnvelopes(t *testing.T) {
	t.Parallel()
	app := quiet()
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	eachEnvelope(t, serveMem(t, app), "GET", map[string]string{
		"bad header line":    "GET / HTTP/1.1\r\nHost: a\r\nno colon here\r\n\r\n",
		"bad chunk":          "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n",
		"bad content-length": "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n",
		"TLS hello":          "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
	}, 400, fx.ErrorCodes.BadRequest)
}

// TestNoGoroutineLeak serves many mixed requests (including clients
// that disconnect mid-request) over the production Serve path, shuts
// down, and checks the goroutine count returns to where it was.
func TestNoGoroutineLeak(t *testing.T) {
	// Warm up process-wide goroutines (fasthttp's date ticker, ...).
	// fasthttp's worker-pool cleaner sleeps MaxIdleWorkerDuration (10s by
	// default) between rounds and notices Stop only after its sleep: it
	// lingers that long after Shutdown. Shorten it so the check is quick.
	const cleaner = 20 * time.Millisecond
	warm := quiet()
	warm.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	warm.Server().MaxIdleWorkerDuration = cleaner // Server boots: after registering
	do(t, warm, "GET", "/", "")
	_ = warm.Shutdown()
	base := settledGoroutines(-1)

	app := quiet()
	app.Get("/ok/:id", func(c *fx.Ctx) error { return c.JSON(200, c.Param("id")) })
	app.Get("/ctx", func(c *fx.Ctx) error {
		// c.Context() is left out here: see TestContextThenShutdownRace.
		c.SetValue("k", c.Param("id"))
		return nil
	})
	app.Get("/err", func(c *fx.Ctx) error { return errNope })
	app.Get("/panic", func(c *fx.Ctx) error { panic("p") })
	app.Server().MaxIdleWorkerDuration = cleaner
	ln := fasthttputil.NewInmemoryListener()
	served := serveOn(app, ln)

	paths := []string{"/ok/1", "/ctx", "/err", "/panic", "/nope"}
	hammerConns(t, ln, 8, 100, func(g, i int) string {
		return "GET " + paths[(g+i)%len(paths)] + " HTTP/1.1\r\nHost: a\r\n\r\n"
	}, func() { // disconnect in the middle of a request
		if half, err := ln.Dial(); err == nil {
			_, _ = half.Write([]byte("GET /ok/1 HTTP/1.1\r\nHo"))
			half.Close()
		}
	})
	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
	<-served
	if n := settledGoroutines(base); n > base {
		_, stacks := serverGoroutines()
		t.Fatalf("%d fasthttp/fx goroutines after Shutdown, %d before:\n%s", n, base, stacks)
	}
}

// serverGoroutines counts the goroutines that belong to fasthttp or fx
// (not the test's own), so that goroutines of unrelated code running in
// the same process do not disturb the check; it returns the count and the
// stacks.
func serverGoroutines() (int, string) {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var n int
	var out strings.Builder
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "serverGoroutines") { // the caller itself
			continue
		}
		if strings.Contains(g, "valyala/fasthttp") || strings.Contains(g, "github.com/fxhq/fx") {
			n++
			out.WriteString(g + "\n\n")
		}
	}
	return n, out.String()
}

// settledGoroutines waits (bounded) for the server goroutine count to
// fall to target or below and returns the last count; target < 0 means
// "until it stops changing".
func settledGoroutines(target int) int {
	n, _ := serverGoroutines()
	for i := 0; i < 300; i++ {
		time.Sleep(10 * time.Millisecond)
		m, _ := serverGoroutines()
		if target >= 0 && m <= target {
			return m
		}
		if target < 0 && m == n && i > 10 {
			return m
		}
		n = m
	}
	return n
}

// Tests of the connection layer over real sockets: quiet close of silent
// connections, lingering close after transport errors (no reset before the
// client read its 413/431), and the bounds of that lingering.

// TestSilentClientClosedQuietly: a connection that never sends a byte
// is closed at ReadTimeout without a response (before, fasthttp wrote an
// unasked-for 408 to it); a client that sent part of a request and stalls
// still gets the 408 envelope.
func TestSilentClientClosedQuietly(t *testing.T) {
	t.Parallel()
	app := quiet(fx.Config{ReadTimeout: 150 * time.Millisecond})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	addr := fxtest.Serve(t, app)

	t.Run("silent", func(t *testing.T) {
		conn := dialBounded(t, addr, 10*time.Second) // a bound
		defer conn.Close()
		got, err := io.ReadAll(conn)
		if err != nil || len(got) != 0 {
			t.Fatalf("silent connection got %q, %v; want a quiet close", got, err)
		}
	})
	t.Run("stalled after a partial request", func(t *testing.T) {
		r := rawExchange(t, addr, 0, "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n")
		mustEnvelope(t, r, 408, fx.ErrorCodes.RequestTimeout)
	})
}

// limitsApp is the App of the early-error tests: 1 MiB BodyLimit, the
// default 8 KiB HeaderLimit.
func limitsApp() *fx.App {
	app := quiet(fx.Config{BodyLimit: 1 << 20})
	app.Post("/up", func(c *fx.Ctx) error { return c.JSON(200, len(c.Body())) })
	return app
}

// countConns is how many requests each early-error case sends.
func countConns() int {
	if testing.Short() {
		return 20
	}
	return 100
}

// bodyFile writes size bytes to a file in dir (for curl).
func bodyFile(t *testing.T, size int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "body"+strconv.Itoa(size))
	if err := os.WriteFile(p, bytes.Repeat([]byte("x"), size), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// goClientEnvelopes sends n requests with net/http's client (a fresh
// connection each, as after a Connection: close) and checks that each gets
// the status and envelope code, never a transport error.
func goClientEnvelopes(t *testing.T, url string, n int, body []byte, hdr http.Header, status int, code string) {
	t.Helper()
	client := &http.Client{Timeout: 20 * time.Second}
	ok := 0
	var firstErr error
	for range n {
		req, err := http.NewRequest("POST", url, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if resp.StatusCode == status && (code == "" || envelopeCode(b) == code) {
			ok++
		} else if firstErr == nil {
			firstErr = fmt.Errorf("%d %q", resp.StatusCode, b)
		}
	}
	if ok != n {
		t.Fatalf("%d of %d requests got the %d envelope; first failure: %v", ok, n, status, firstErr)
	}
}

// curlEnvelopes runs curl once for n transfers of the file and checks
// each transfer's status and envelope. curlArgs says how the body goes:
// {"--data-binary"} loads it in memory (curl -d @file; about 1 s per 64
// MiB in curl itself on the test machine, so used for the small body),
// {"-X", "POST", "-T"} streams it. Both send curl's own Expect:
// 100-continue for large bodies. header, if set, is a file of extra header
// lines (-H @file).
func curlEnvelopes(t *testing.T, url string, n int, curlArgs []string, file, header string, status int, code string) {
	t.Helper()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed (apt-get install curl): the curl half of this test did not run")
	}
	var args []string
	for i := range n {
		if i > 0 {
			args = append(args, "--next")
		}
		args = append(args, "-sS", "--max-time", "20", "-w", "\n=%{http_code}\n")
		args = append(args, curlArgs...)
		if curlArgs[len(curlArgs)-1] == "--data-binary" {
			args = append(args, "@"+file)
		} else {
			args = append(args, file)
		}
		if header != "" {
			args = append(args, "-H", "@"+header)
		}
		args = append(args, url)
	}
	out, err := exec.Command(curl, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("curl: %v\n%s", err, firstLines(out, 10))
	}
	ok := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	var body []byte
	for sc.Scan() {
		line := sc.Bytes()
		if s, found := bytes.CutPrefix(line, []byte("=")); found {
			if got, _ := strconv.Atoi(string(s)); got == status && (code == "" || envelopeCode(body) == code) {
				ok++
			}
			body = nil
			continue
		}
		body = append(body[:0], line...)
	}
	if ok != n {
		t.Fatalf("curl: %d of %d transfers got the %d envelope:\n%s", ok, n, status, firstLines(out, 10))
	}
}

// curlStream and curlLoad are curlEnvelopes' two ways to send a body.
var (
	curlStream = []string{"-X", "POST", "-T"}
	curlLoad   = []string{"--data-binary"}
)

// envelopeCode is the code of an envelope body, "" if b is not one in the
// wire format (fxtest.CheckEnvelopeBody); unlike checkEnvelopeBody it
// needs no t, so any goroutine may call it.
func envelopeCode(b []byte) string {
	env, err := fxtest.CheckEnvelopeBody(b)
	if err != nil {
		return ""
	}
	return env.Code
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitN(string(b), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// early413s sends bodies of 2, 8 and 64 MiB over BodyLimit to url
// with net/http and curl (streamed, and curl -d @file), n times each, and
// requires every client to read the 413 envelope.
func early413s(t *testing.T, url string, n int) {
	t.Helper()
	for _, size := range []int{2 << 20, 8 << 20, 64 << 20} {
		body := bytes.Repeat([]byte("x"), size)
		t.Run(fmt.Sprintf("413 %d MiB net/http", size>>20), func(t *testing.T) {
			goClientEnvelopes(t, url, n, body, nil, 413, fx.ErrorCodes.PayloadTooLarge)
		})
		t.Run(fmt.Sprintf("413 %d MiB curl", size>>20), func(t *testing.T) {
			curlEnvelopes(t, url, n, curlStream, bodyFile(t, size), "", 413, fx.ErrorCodes.PayloadTooLarge)
		})
	}
	t.Run("413 2 MiB curl -d @file", func(t *testing.T) {
		curlEnvelopes(t, url, n, curlLoad, bodyFile(t, 2<<20), "", 413, fx.ErrorCodes.PayloadTooLarge)
	})
}

// TestEarlyErrorsReachTheClient: fasthttp answers 413/431 as soon as
// it sees the headers and closes; the client is still sending. Before the
// lingering close the kernel reset the connection and a net/http client
// got the 413 3-8 times in 20 ("connection reset by peer").
func TestEarlyErrorsReachTheClient(t *testing.T) {
	t.Parallel()
	addr := fxtest.Serve(t, limitsApp())
	url := "http://" + addr + "/up"
	n := countConns()
	early413s(t, url, n)
	big := strings.Repeat("h", 32<<10) // 4x the default HeaderLimit
	body := bytes.Repeat([]byte("x"), 2<<20)
	t.Run("431 net/http", func(t *testing.T) {
		goClientEnvelopes(t, url, n, body, http.Header{"X-Big": {big}}, 431, fx.ErrorCodes.HeadersTooLarge)
	})
	t.Run("431 curl", func(t *testing.T) {
		hdr := filepath.Join(t.TempDir(), "header")
		if err := os.WriteFile(hdr, []byte("X-Big: "+big+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		curlEnvelopes(t, url, n, curlStream, bodyFile(t, 2<<20), hdr, 431, fx.ErrorCodes.HeadersTooLarge)
	})
}

// TestEarlyErrorsReachTheClientNetHTTP: the same through the nethttp
// adapter on a net/http server, whose own bounded discard (256 KiB, then
// close-write and a 500 ms wait) must let the 413 envelope arrive. Its 431
// is net/http's own plain-text reply (documented in package nethttp), so
// only the status is checked there.
func TestEarlyErrorsReachTheClientNetHTTP(t *testing.T) {
	t.Parallel()
	ln := listenLoopback(t)
	srv := &http.Server{Handler: nethttp.Handler(limitsApp()), MaxHeaderBytes: 8 << 10}
	go func() { _ = srv.Serve(ln) }() // ends with Shutdown
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	url := "http://" + ln.Addr().String() + "/up"
	n := countConns()
	early413s(t, url, n)
	big := strings.Repeat("h", 32<<10)
	t.Run("431 net/http", func(t *testing.T) {
		goClientEnvelopes(t, url, n, bytes.Repeat([]byte("x"), 2<<20), http.Header{"X-Big": {big}}, 431, "")
	})
}

// TestLingerIsBounded: a client that keeps trickling after its 413 is
// cut off at the linger bound (1 s), and a flood of oversized uploads
// against a small connection limit gets envelopes (413, or 503 over the
// limit), never exhausts the limit for good: once the lingering ends the
// server serves again.
func TestLingerIsBounded(t *testing.T) {
	t.Parallel()
	app := quiet(fx.Config{BodyLimit: 1 << 20, Concurrency: 8})
	app.Post("/up", func(c *fx.Ctx) error { return c.JSON(200, len(c.Body())) })
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	addr := fxtest.Serve(t, app)

	t.Run("trickler cut off", func(t *testing.T) {
		conn := dialBounded(t, addr, 10*time.Second) // a bound
		defer conn.Close()
		_, _ = io.WriteString(conn, "POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999\r\n\r\n")
		stop := make(chan struct{})
		defer close(stop)
		go trickle(conn, "x", stop)
		br := bufio.NewReader(conn)
		r, err := readResult(br, "POST")
		if err != nil {
			t.Fatal(err)
		}
		mustEnvelope(t, r, 413, fx.ErrorCodes.PayloadTooLarge)
		start := time.Now()
		if _, err := br.ReadByte(); err == nil {
			t.Fatalf("bytes after the 413")
		}
		// Reading sees the FIN at once (half-close); writing fails once the
		// server really closes, at the linger bound.
		for {
			if _, err := conn.Write([]byte("x")); err != nil {
				break
			}
			if time.Since(start) > 3*time.Second { // the bound is 1 s; slack for a loaded machine
				t.Fatalf("a trickling client held its connection for %v after the 413", time.Since(start))
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("flood of oversized uploads", func(t *testing.T) {
		body := bytes.Repeat([]byte("x"), 8<<20)
		var wg sync.WaitGroup
		var mu sync.Mutex
		counts := map[int]int{}
		var errs []error
		for range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
				resp, err := client.Post("http://"+addr+"/up", "application/octet-stream", bytes.NewReader(body))
				status := -1
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				} else {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
					if code := envelopeCode(b); (status == 413) != (code == fx.ErrorCodes.PayloadTooLarge) ||
						(status == 503) != (code == fx.ErrorCodes.ServiceUnavailable) {
						status = -2 // not the envelope its status promises
					}
				}
				mu.Lock()
				counts[status]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		// Under the race detector the clients' own writes of 40 x 8 MiB
		// saturate the machine, and some request heads arrive after the
		// refusal's head wait (refused silently, by design); only the
		// envelopes are checked there.
		if counts[413]+counts[503]+counts[-1] != 40 || counts[413] == 0 || (counts[-1] != 0 && !raceEnabled) {
			t.Fatalf("flood outcomes %v; want only 413 and 503 envelopes; errors: %v", counts, errs)
		}
		// Every lingering connection gives its slot back within the bound.
		deadline := time.Now().Add(5 * time.Second)
		for {
			resp, err := http.Get("http://" + addr + "/")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the server still refuses after the flood: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

func TestOverConcurrencyAnswersWithEnvelope(t *testing.T) {
	t.Parallel()
	app := quiet(fx.Config{Concurrency: 2})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	ln := serveMem(t, app)

	var held []net.Conn
	for range 2 {
		c, br := dialMem(t, ln)
		// Make sure each is accepted and served before the next.
		if w := roundTripRaw(t, c, br, "GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); w.status != 200 {
			t.Fatalf("within the limit: %d", w.status)
		}
		held = append(held, c)
	}
	over, overBr := dialMem(t, ln)
	w := roundTripRaw(t, over, overBr, "GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	env := mustEnvelope(t, w, 503, fx.ErrorCodes.ServiceUnavailable)
	if env.Message == "" || !w.close || w.header.Get("Retry-After") == "" {
		t.Fatalf("503: %v %q", w.header, w.body)
	}
	// The 503 is built once; a Date in it would be the process start time.
	if d := w.header.Get("Date"); d != "" {
		t.Errorf("prebuilt 503 carries a frozen Date: %s", d)
	}

	// Closing a held connection gives its slot back.
	held[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := ln.Dial()
		if err != nil {
			t.Fatal(err)
		}
		w := roundTripRaw(t, c, bufio.NewReader(c), "GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		c.Close()
		if w.status == 200 {
			break
		}
		mustEnvelope(t, w, 503, fx.ErrorCodes.ServiceUnavailable)
		if time.Now().After(deadline) {
			t.Fatalf("the slot of a closed connection was never given back")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestOverConcurrencyOverTCP(t *testing.T) {
	t.Parallel()
	app := quiet(fx.Config{Concurrency: 1})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	addr := fxtest.Serve(t, app)
	first := dialBounded(t, addr, 10*time.Second)
	defer first.Close()
	if w := roundTripRaw(t, first, bufio.NewReader(first), "GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); w.status != 200 {
		t.Fatalf("first: %d", w.status)
	}
	// A real client (net/http) gets the 503 envelope, not a reset.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("over the limit: %v (want the 503 envelope)", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	mustEnvelope(t, result{resp.StatusCode, resp.Header, body, resp.Close}, 503, fx.ErrorCodes.ServiceUnavailable)
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

// Transport errors carry the envelope with catalog codes, and
// never echo request bytes.
func TestTransportErrors(t *testing.T) {
	t.Parallel()
	app := quiet(fx.Config{BodyLimit: 1024, HeaderLimit: 2048, ReadTimeout: 300 * time.Millisecond})
	app.Post("/", func(c *fx.Ctx) error { return c.String(200, "ok") })
	addr := fxtest.Serve(t, app)

	t.Run("ok", func(t *testing.T) {
		r := rawExchange(t, addr, 0, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
		if r.status != 200 || string(r.body) != "ok" {
			t.Fatalf("%d %q", r.status, r.body)
		}
		if r.header.Get("Server") != "" {
			t.Errorf("Server header %q sent by default", r.header.Get("Server"))
		}
	})
	drip := func(head, piece string) []string { // head, then piece 40 times, one write each
		chunks := []string{head}
		for range 40 {
			chunks = append(chunks, piece)
		}
		return chunks
	}
	body := strings.Repeat("<secret-body>", 200)
	for _, tc := range []struct {
		name   string
		delay  time.Duration // between the writes of chunks
		chunks []string
		status int
		code   string
		echo   string // request bytes the response must not contain ("" none)
	}{
		{"body too large", 0, []string{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body},
			413, fx.ErrorCodes.PayloadTooLarge, "secret-body"},
		{"headers too large", 0, []string{"POST / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("<hdr>", 1000) + "\r\n\r\n"},
			431, fx.ErrorCodes.HeadersTooLarge, "<hdr>"},
		{"malformed request line", 0, []string{"GET /<script>\x01 HTTP/1.1 junk\r\nHost: x\r\n\r\n"},
			400, fx.ErrorCodes.BadRequest, "script"},
		{"malformed header", 0, []string{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: <evil>\r\n\r\n"},
			400, fx.ErrorCodes.BadRequest, "evil"},
		{"read timeout (trickled headers)", 50 * time.Millisecond, drip("POST / HTTP/1.1\r\nHost: x\r\n", "X-Slow: <drip>\r\n"),
			408, fx.ErrorCodes.RequestTimeout, "drip"},
		{"read timeout (trickled body)", 50 * time.Millisecond, drip("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", "b"),
			408, fx.ErrorCodes.RequestTimeout, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rawExchange(t, addr, tc.delay, tc.chunks...)
			mustEnvelope(t, r, tc.status, tc.code)
			if tc.echo != "" {
				noEcho(t, r, tc.echo)
			}
		})
	}
}

func noEcho(t *testing.T, r result, s string) {
	t.Helper()
	if strings.Contains(string(r.body), s) {
		t.Errorf("response echoes request bytes %q: %q", s, r.body)
	}
	for k, vs := range r.header {
		for _, v := range vs {
			if strings.Contains(v, s) {
				t.Errorf("header %s echoes request bytes: %q", k, v)
			}
		}
	}
}

func TestServerHeaderOnRequest(t *testing.T) {
	app := quiet(fx.Config{ServerHeader: "fx-test"})
	app.Get("/", func(c *fx.Ctx) error { return c.String(200, "ok") })
	r := do(t, app, "GET", "/", "")
	if r.header.Get("Server") != "fx-test" {
		t.Errorf("Server = %q", r.header.Get("Server"))
	}
	if quietServer := do(t, quiet(), "GET", "/", ""); quietServer.header.Get("Server") != "" {
		t.Errorf("default Server header %q", quietServer.header.Get("Server"))
	}
}

// Config defaults are safe: a read timeout and limits are set.
func TestConfigDefaults(t *testing.T) {
	c := fx.New().Config()
	if c.ReadTimeout <= 0 || c.WriteTimeout <= 0 || c.IdleTimeout <= 0 {
		t.Errorf("timeouts %v %v %v", c.ReadTimeout, c.WriteTimeout, c.IdleTimeout)
	}
	if c.BodyLimit != fx.DefaultBodyLimit || c.HeaderLimit != fx.DefaultHeaderLimit || c.Logger == nil {
		t.Errorf("defaults %+v", c)
	}
	if c.Development {
		t.Error("Development on by default")
	}
	// Negative disables.
	if c := fx.New(fx.Config{ReadTimeout: -1}).Config(); c.ReadTimeout != 0 {
		t.Errorf("negative ReadTimeout gave %v", c.ReadTimeout)
	}
}

// The connection layer's phase deadlines (internal/conn, deadline.go)
// against an App: a request cut off answers with the 408 envelope. The
// layer's own tests (lazy deadline moves, the phase clock, hijacked
// connections) are in internal/conn.

const idleRequest = "GET /hello HTTP/1.1\r\nHost: fx\r\n\r\n"

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

// A slow client on a connection that served fast requests before (so
// later deadlines were only recorded) is still cut off ReadTimeout after
// its request's first byte, with the 408 envelope, and the idle timeout
// still closes a quiet connection.
func TestDeadlineLazyStillBounds(t *testing.T) {
	t.Parallel()
	const readTimeout, idleTimeout = 300 * time.Millisecond, 300 * time.Millisecond
	app := quiet(fx.Config{ReadTimeout: readTimeout, IdleTimeout: idleTimeout})
	app.Get("/hello", func(c *fx.Ctx) error { return c.JSON(200, "hello") })
	addr := fxtest.Serve(t, app)

	c, get := keepAlive(t, addr)
	for range 20 {
		get()
	}
	// Trickle a request head, one byte every 50 ms, for up to 5 s.
	start := time.Now()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(c)
		got <- string(b)
	}()
	head := "GET /hello HTTP/1.1\r\nHost: fx\r\nX-Slow: " + strings.Repeat("a", 100)
	for i := 0; i < len(head) && time.Since(start) < 5*time.Second; i++ {
		if _, err := c.Write([]byte{head[i]}); err != nil {
			break // cut off
		}
		select {
		case resp := <-got:
			got <- resp
			i = len(head)
		case <-time.After(50 * time.Millisecond):
		}
	}
	resp := <-got
	elapsed := time.Since(start)
	if !strings.HasPrefix(resp, "HTTP/1.1 408") || !strings.Contains(resp, fx.ErrorCodes.RequestTimeout) {
		t.Fatalf("slow request after fast ones: got %q, want a 408 %s", resp, fx.ErrorCodes.RequestTimeout)
	}
	// The slack absorbs scheduling stalls (a loaded machine's, the race
	// detector's: cut-offs at 2.4 s were seen with the root suite beside
	// other builds); it stays below the 5 s the trickle lasts, so a
	// request that was never cut off still fails.
	const slack = 3500 * time.Millisecond
	if elapsed < readTimeout || elapsed > readTimeout+slack {
		t.Fatalf("slow request cut off after %v; want ReadTimeout (%v) after its first byte, within %v", elapsed, readTimeout, slack)
	}

	// Idle: a connection that served requests and then says nothing is
	// closed IdleTimeout later.
	c2, get2 := keepAlive(t, addr)
	for range 20 {
		get2()
	}
	start = time.Now()
	_ = c2.SetDeadline(time.Now().Add(10 * time.Second))
	n, err := c2.Read(make([]byte, 1))
	elapsed = time.Since(start)
	if n != 0 || err != io.EOF {
		t.Fatalf("idle connection: read %d bytes, %v; want EOF (closed by the server)", n, err)
	}
	if elapsed > idleTimeout+slack {
		t.Fatalf("idle connection closed after %v; want IdleTimeout (%v), within %v", elapsed, idleTimeout, slack)
	}
}

// A 100 Continue is an interim response: the request's body is still read
// within ReadTimeout from the request's first byte, not given a fresh
// idle wait as after a final response.
func TestDeadlineInterimResponseKeepsReadTimeout(t *testing.T) {
	t.Parallel()
	const readTimeout = 200 * time.Millisecond
	app := quiet(fx.Config{ReadTimeout: readTimeout, IdleTimeout: 20 * time.Second})
	app.Post("/echo", func(c *fx.Ctx) error { return c.Send(200, "text/plain", c.Body()) })
	c := dialBounded(t, fxtest.Serve(t, app), 10*time.Second)
	defer c.Close()
	start := time.Now()
	if _, err := io.WriteString(c, "POST /echo HTTP/1.1\r\nHost: fx\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	if interim, err := readResult(br, "POST"); err != nil || interim.status != 100 {
		t.Fatalf("interim response: %v %v", interim, err)
	}
	// The body never comes.
	r, err := readResult(br, "POST")
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("no response after the 100 Continue within %v: %v", elapsed, err)
	}
	mustEnvelope(t, r, 408, fx.ErrorCodes.RequestTimeout)
	if elapsed > readTimeout+2*time.Second {
		t.Fatalf("cut off after %v; want ReadTimeout (%v) from the request's first byte, within 2s", elapsed, readTimeout)
	}
}

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
	for _, mode := range []struct {
		name string
		bare bool
	}{{"CRLF", false}, {"bare LF", true}} {
		t.Run(mode.name, func(t *testing.T) {
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
			t.Parallel() // each script ends with a 300 ms wait on a kept connection: they overlap
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
// 400 too, once its read timeout (250 ms here) has passed: the same status,
// without the wait. A bare-LF head that fasthttp does end (a CRLF CRLF
// behind it in the same write) is served by both.
func TestFramingLFOnlyHeadAnsweredAtOnce(t *testing.T) {
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
