package fx_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/nethttp"
)

// Tests of the connection layer over real sockets: quiet close of silent
// connections, lingering close after transport errors (no reset before the
// client read its 413/431), and the bounds of that lingering.

// TestConnSilentClientClosedQuietly: a connection that never sends a byte
// is closed at ReadTimeout without a response (before, fasthttp wrote an
// unasked-for 408 to it); a client that sent part of a request and stalls
// still gets the 408 envelope.
func TestConnSilentClientClosedQuietly(t *testing.T) {
	t.Parallel()
	app := quiet(fx.Config{ReadTimeout: 150 * time.Millisecond})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	addr := fxtest.Serve(t, app)

	t.Run("silent", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // a bound
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

// connLimitsApp is the App of the early-error tests: 1 MiB BodyLimit, the
// default 8 KiB HeaderLimit.
func connLimitsApp() *fx.App {
	app := quiet(fx.Config{BodyLimit: 1 << 20})
	app.Post("/up", func(c *fx.Ctx) error { return c.JSON(200, len(c.Body())) })
	return app
}

// connCount is how many requests each early-error case sends.
func connCount() int {
	if testing.Short() {
		return 20
	}
	return 100
}

// connBodyFile writes size bytes to a file in dir (for curl).
func connBodyFile(t *testing.T, size int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "body"+strconv.Itoa(size))
	if err := os.WriteFile(p, bytes.Repeat([]byte("x"), size), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// connGoClientEnvelopes sends n requests with net/http's client (a fresh
// connection each, as after a Connection: close) and checks that each gets
// the status and envelope code, never a transport error.
func connGoClientEnvelopes(t *testing.T, url string, n int, body []byte, hdr http.Header, status int, code string) {
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
		if resp.StatusCode == status && (code == "" || connCode(b) == code) {
			ok++
		} else if firstErr == nil {
			firstErr = fmt.Errorf("%d %q", resp.StatusCode, b)
		}
	}
	if ok != n {
		t.Fatalf("%d of %d requests got the %d envelope; first failure: %v", ok, n, status, firstErr)
	}
}

// connCurlEnvelopes runs curl once for n transfers of the file and checks
// each transfer's status and envelope. curlArgs says how the body goes:
// {"--data-binary"} loads it in memory (curl -d @file; about 1 s per 64
// MiB in curl itself on the test machine, so used for the small body),
// {"-X", "POST", "-T"} streams it. Both send curl's own Expect:
// 100-continue for large bodies. header, if set, is a file of extra header
// lines (-H @file).
func connCurlEnvelopes(t *testing.T, url string, n int, curlArgs []string, file, header string, status int, code string) {
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
			if got, _ := strconv.Atoi(string(s)); got == status && (code == "" || connCode(body) == code) {
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

// curlStream and curlLoad are connCurlEnvelopes' two ways to send a body.
var (
	curlStream = []string{"-X", "POST", "-T"}
	curlLoad   = []string{"--data-binary"}
)

// connCode is the code of an envelope body, "" if b is not one. The
// envelope's exact shape is checked by checkEnvelopeBody elsewhere; this is
// safe to call from any goroutine.
func connCode(b []byte) string {
	var env envelope
	if json.Unmarshal(b, &env) != nil {
		return ""
	}
	return env.Error.Code
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitN(string(b), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// connEarly413s sends bodies of 2, 8 and 64 MiB over BodyLimit to url
// with net/http and curl (streamed, and curl -d @file), n times each, and
// requires every client to read the 413 envelope.
func connEarly413s(t *testing.T, url string, n int) {
	t.Helper()
	for _, size := range []int{2 << 20, 8 << 20, 64 << 20} {
		body := bytes.Repeat([]byte("x"), size)
		t.Run(fmt.Sprintf("413 %d MiB net/http", size>>20), func(t *testing.T) {
			connGoClientEnvelopes(t, url, n, body, nil, 413, fx.ErrorCodes.PayloadTooLarge)
		})
		t.Run(fmt.Sprintf("413 %d MiB curl", size>>20), func(t *testing.T) {
			connCurlEnvelopes(t, url, n, curlStream, connBodyFile(t, size), "", 413, fx.ErrorCodes.PayloadTooLarge)
		})
	}
	t.Run("413 2 MiB curl -d @file", func(t *testing.T) {
		connCurlEnvelopes(t, url, n, curlLoad, connBodyFile(t, 2<<20), "", 413, fx.ErrorCodes.PayloadTooLarge)
	})
}

// TestConnEarlyErrorsReachTheClient: fasthttp answers 413/431 as soon as
// it sees the headers and closes; the client is still sending. Before the
// lingering close the kernel reset the connection and a net/http client
// got the 413 3-8 times in 20 ("connection reset by peer").
func TestConnEarlyErrorsReachTheClient(t *testing.T) {
	t.Parallel()
	addr := fxtest.Serve(t, connLimitsApp())
	url := "http://" + addr + "/up"
	n := connCount()
	connEarly413s(t, url, n)
	big := strings.Repeat("h", 32<<10) // 4x the default HeaderLimit
	body := bytes.Repeat([]byte("x"), 2<<20)
	t.Run("431 net/http", func(t *testing.T) {
		connGoClientEnvelopes(t, url, n, body, http.Header{"X-Big": {big}}, 431, fx.ErrorCodes.HeadersTooLarge)
	})
	t.Run("431 curl", func(t *testing.T) {
		hdr := filepath.Join(t.TempDir(), "header")
		if err := os.WriteFile(hdr, []byte("X-Big: "+big+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		connCurlEnvelopes(t, url, n, curlStream, connBodyFile(t, 2<<20), hdr, 431, fx.ErrorCodes.HeadersTooLarge)
	})
}

// TestConnEarlyErrorsReachTheClientNetHTTP: the same through the nethttp
// adapter on a net/http server, whose own bounded discard (256 KiB, then
// close-write and a 500 ms wait) must let the 413 envelope arrive. Its 431
// is net/http's own plain-text reply (documented in package nethttp), so
// only the status is checked there.
func TestConnEarlyErrorsReachTheClientNetHTTP(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: nethttp.Handler(connLimitsApp()), MaxHeaderBytes: 8 << 10}
	go func() { _ = srv.Serve(ln) }() // ends with Shutdown
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	url := "http://" + ln.Addr().String() + "/up"
	n := connCount()
	connEarly413s(t, url, n)
	big := strings.Repeat("h", 32<<10)
	t.Run("431 net/http", func(t *testing.T) {
		connGoClientEnvelopes(t, url, n, bytes.Repeat([]byte("x"), 2<<20), http.Header{"X-Big": {big}}, 431, "")
	})
}

// TestConnLingerIsBounded: a client that keeps trickling after its 413 is
// cut off at the linger bound (1 s), and a flood of oversized uploads
// against a small connection limit gets envelopes (413, or 503 over the
// limit), never exhausts the limit for good: once the lingering ends the
// server serves again.
func TestConnLingerIsBounded(t *testing.T) {
	t.Parallel()
	app := quiet(fx.Config{BodyLimit: 1 << 20, Concurrency: 8})
	app.Post("/up", func(c *fx.Ctx) error { return c.JSON(200, len(c.Body())) })
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	addr := fxtest.Serve(t, app)

	t.Run("trickler cut off", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second)) // a bound
		_, _ = io.WriteString(conn, "POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999\r\n\r\n")
		stop := make(chan struct{})
		defer close(stop)
		go func() { // one byte every 20 ms, for ever
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
					if _, err := conn.Write([]byte("x")); err != nil {
						return
					}
				}
			}
		}()
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		checkEnvelopeBody(t, b, fx.ErrorCodes.PayloadTooLarge)
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
					if code := connCode(b); (status == 413) != (code == fx.ErrorCodes.PayloadTooLarge) ||
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

func TestRelOverConcurrencyAnswersWithEnvelope(t *testing.T) {
	t.Parallel()
	app := quiet(fx.Config{Concurrency: 2})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	ln := relServeMem(t, app)

	var held []net.Conn
	for range 2 {
		c, err := ln.Dial()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Make sure each is accepted and served before the next.
		if w := relRoundTrip(t, c, bufio.NewReader(c), "GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); w.status != 200 {
			t.Fatalf("within the limit: %d", w.status)
		}
		held = append(held, c)
	}
	over, err := ln.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	w := relRoundTrip(t, over, bufio.NewReader(over), "GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	env := relMustEnvelope(t, w, 503, fx.ErrorCodes.ServiceUnavailable)
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
		w := relRoundTrip(t, c, bufio.NewReader(c), "GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		c.Close()
		if w.status == 200 {
			break
		}
		relMustEnvelope(t, w, 503, fx.ErrorCodes.ServiceUnavailable)
		if time.Now().After(deadline) {
			t.Fatalf("the slot of a closed connection was never given back")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRelOverConcurrencyOverTCP(t *testing.T) {
	t.Parallel()
	app := quiet(fx.Config{Concurrency: 1})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	addr := fxtest.Serve(t, app)
	first, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if w := relRoundTrip(t, first, bufio.NewReader(first), "GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); w.status != 200 {
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
	relMustEnvelope(t, result{resp.StatusCode, resp.Header, body, resp.Close}, 503, fx.ErrorCodes.ServiceUnavailable)
}
