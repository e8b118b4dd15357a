package fx_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/valyala/fasthttp/fasthttputil"
)

func TestRelDefaultLimits(t *testing.T) {
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
	// TestRel*Timeout tests below serve through them): fasthttp's own
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

func TestRelBodyLimit(t *testing.T) {
	app := quiet(fx.Config{BodyLimit: 1024})
	app.Put("/echo", func(c *fx.Ctx) error { return c.Send(200, "application/octet-stream", c.Body()) })
	relEachEnvelope(t, relServeMem(t, app), "PUT", map[string]string{
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

func TestRelHeaderLimit(t *testing.T) {
	app := quiet(fx.Config{HeaderLimit: 1024})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	relEachEnvelope(t, relServeMem(t, app), "GET", map[string]string{
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

func TestRelSlowLorisIsCutOffByReadTimeout(t *testing.T) {
	t.Parallel()
	eachMemoryMode(t, testRelSlowLoris)
}

func testRelSlowLoris(t *testing.T, reduce bool) {
	t.Parallel()
	app := quiet(fx.Config{ReadTimeout: 100 * time.Millisecond})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	app.Server().ReduceMemoryUsage = reduce
	ln := relServeMem(t, app)
	for name, part := range map[string]string{
		"trickled headers": "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n",
		"trickled body":    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n{\"a\":",
	} { // a client that sends nothing at all is closed quietly: TestConnSilentClientClosedQuietly

		t.Run(name, func(t *testing.T) {
			t.Parallel()
			conn, err := ln.Dial()
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			// Keep trickling a byte at a time: the read timeout counts from
			// the first byte, not from the last.
			stop := make(chan struct{})
			defer close(stop)
			if part != "" {
				go func() {
					_, _ = conn.Write([]byte(part))
					for {
						select {
						case <-stop:
							return
						case <-time.After(20 * time.Millisecond):
							if _, err := conn.Write([]byte("X")); err != nil {
								return
							}
						}
					}
				}()
			}
			w := relRoundTrip(t, conn, br, "GET", "")
			relMustEnvelope(t, w, 408, fx.ErrorCodes.RequestTimeout)
			if !w.close {
				t.Fatalf("the slow client must be disconnected")
			}
			if _, err := br.ReadByte(); err == nil {
				t.Fatalf("the connection stayed open after the 408")
			}
		})
	}
}

func TestRelIdleTimeoutClosesKeepAliveQuietly(t *testing.T) {
	t.Parallel()
	eachMemoryMode(t, testRelIdleTimeout)
}

func testRelIdleTimeout(t *testing.T, reduce bool) {
	app := quiet(fx.Config{IdleTimeout: 50 * time.Millisecond})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	app.Server().ReduceMemoryUsage = reduce
	ln := relServeMem(t, app)
	conn, err := ln.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	for i := range 3 { // keep-alive: under ReduceMemoryUsage each request after the first starts with the one-byte read
		if w := relRoundTrip(t, conn, br, "GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); w.status != 200 {
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

func TestRelWriteTimeoutFreesTheConnection(t *testing.T) {
	t.Parallel()
	// Over TCP: an in-memory pipe buffers any amount, so a client that does
	// not read would never block the server there.
	app := quiet(fx.Config{WriteTimeout: 100 * time.Millisecond})
	big := bytes.Repeat([]byte("z"), 64<<20) // far more than loopback socket buffers hold
	app.Get("/big", func(c *fx.Ctx) error { return c.Send(200, "application/octet-stream", big) })
	conn, err := net.Dial("tcp", fxtest.Serve(t, app))
	if err != nil {
		t.Fatal(err)
	}
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

func TestRelMalformedRequestsGetEnvelopes(t *testing.T) {
	t.Parallel()
	app := quiet()
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	relEachEnvelope(t, relServeMem(t, app), "GET", map[string]string{
		"bad header line":    "GET / HTTP/1.1\r\nHost: a\r\nno colon here\r\n\r\n",
		"bad chunk":          "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n",
		"bad content-length": "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n",
		"TLS hello":          "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
	}, 400, fx.ErrorCodes.BadRequest)
}

// TestRelNoGoroutineLeak serves many mixed requests (including clients
// that disconnect mid-request) over the production Serve path, shuts
// down, and checks the goroutine count returns to where it was.
func TestRelNoGoroutineLeak(t *testing.T) {
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
	base := relSettledGoroutines(-1)

	app := quiet()
	app.Get("/ok/:id", func(c *fx.Ctx) error { return c.JSON(200, c.Param("id")) })
	app.Get("/ctx", func(c *fx.Ctx) error {
		// c.Context() is left out here: see TestRelContextThenShutdownRace.
		c.SetValue("k", c.Param("id"))
		return nil
	})
	app.Get("/err", func(c *fx.Ctx) error { return relErrNope })
	app.Get("/panic", func(c *fx.Ctx) error { panic("p") })
	app.Server().MaxIdleWorkerDuration = cleaner
	ln := fasthttputil.NewInmemoryListener()
	served := make(chan error, 1)
	go func() { served <- app.Serve(ln) }()

	paths := []string{"/ok/1", "/ctx", "/err", "/panic", "/nope"}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := ln.Dial()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			for i := range 100 {
				if _, err := relRoundTripErr(conn, br, "GET", "GET "+paths[(g+i)%len(paths)]+" HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
					t.Error(err)
					return
				}
			}
			// Disconnect in the middle of a request.
			half, err := ln.Dial()
			if err == nil {
				_, _ = half.Write([]byte("GET /ok/1 HTTP/1.1\r\nHo"))
				half.Close()
			}
		}()
	}
	wg.Wait()
	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
	<-served
	if n := relSettledGoroutines(base); n > base {
		_, stacks := relServerGoroutines()
		t.Fatalf("%d fasthttp/fx goroutines after Shutdown, %d before:\n%s", n, base, stacks)
	}
}

// relServerGoroutines counts the goroutines that belong to fasthttp or fx
// (not the test's own), so that goroutines of unrelated code running in
// the same process do not disturb the check; it returns the count and the
// stacks.
func relServerGoroutines() (int, string) {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var n int
	var out strings.Builder
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "relServerGoroutines") { // the caller itself
			continue
		}
		if strings.Contains(g, "valyala/fasthttp") || strings.Contains(g, "github.com/fxhq/fx") {
			n++
			out.WriteString(g + "\n\n")
		}
	}
	return n, out.String()
}

// relSettledGoroutines waits (bounded) for the server goroutine count to
// fall to target or below and returns the last count; target < 0 means
// "until it stops changing".
func relSettledGoroutines(target int) int {
	n, _ := relServerGoroutines()
	for i := 0; i < 300; i++ {
		time.Sleep(10 * time.Millisecond)
		m, _ := relServerGoroutines()
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
