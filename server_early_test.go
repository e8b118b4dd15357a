package fx_test

// Errors before any handler (413, 431, 408, 400) reach real clients (Go's
// and curl, on both transports) as envelopes, and the transport errors
// fasthttp writes carry the envelope too.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/nethttp"
)

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
	requireSlow(t) // seconds of real-time waits: .ci/run runs it
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
	requireSlow(t) // seconds of real-time waits: .ci/run runs it
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

// Transport errors carry the envelope with catalog codes, and
// never echo request bytes.
func TestTransportErrors(t *testing.T) {
	t.Parallel()
	app := quiet(fx.Config{BodyLimit: 1024, HeaderLimit: 2048, ReadTimeout: 300 * time.Millisecond})
	app.Post("/", func(c *fx.Ctx) error { return c.String(200, "ok") })
	addr := fxtest.Serve(t, app)
	w := &waiting{t: t} // the exchanges' waits overlap
	defer w.Wait()

	w.Run("ok", func(t *testing.T) {
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
		w.Run(tc.name, func(t *testing.T) {
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
