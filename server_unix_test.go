//go:build unix

package fx_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
)

// Descriptor exhaustion, tested in a child process (this test binary run
// again) whose RLIMIT_NOFILE is 256: a flood of idle connections must not
// end Serve (before, accept's EMFILE was fatal to fasthttp and the program
// exited), and the server must serve again once the flood ends.

const childServerEnv = "FX_CONN_CHILD_CONCURRENCY"

// TestChildServer is the child: it lowers its descriptor limit, serves
// on 127.0.0.1 and prints its address and Config.Concurrency; it exits when
// its stdin closes, and with status 3 if Serve ever returns.
func TestChildServer(t *testing.T) {
	conc, ok := os.LookupEnv(childServerEnv)
	if !ok {
		t.Skip("the child of TestDescriptorFlood; not a test on its own")
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		fmt.Println("getrlimit:", err)
		os.Exit(2)
	}
	rl.Cur = 256
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		fmt.Println("setrlimit:", err)
		os.Exit(2)
	}
	n, _ := strconv.Atoi(conc)
	app := fx.New(fx.Config{Concurrency: n, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(2)
	}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // EOF: the parent is done
		os.Exit(0)
	}()
	fmt.Printf("addr=%s concurrency=%d\n", ln.Addr(), app.Config().Concurrency)
	err = app.Serve(ln)
	fmt.Printf("serve returned: %v\n", err)
	os.Exit(3)
}

// startChildServer starts TestChildServer with the given
// Config.Concurrency (0: the default) and returns it with its address
// and its Concurrency.
func startChildServer(t *testing.T, concurrency int) (c *child, addr string, conc int) {
	t.Helper()
	c = startChild(t, "TestChildServer", childServerEnv+"="+strconv.Itoa(concurrency))
	l := c.waitLine("addr=")
	if _, err := fmt.Sscanf(l, "addr=%s concurrency=%d", &addr, &conc); err != nil {
		t.Fatalf("child said %q: %v", l, err)
	}
	return c, addr, conc
}

// floodDescriptors opens n idle connections to addr (in parallel, each bounded),
// and returns them.
func floodDescriptors(addr string, n int) []net.Conn {
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return conns
}

// probeServer sends one GET on a fresh connection and returns its status, or
// 0 when the server closed the connection without a response (which is
// what a refusal past the refusal budget does), or -1 on another failure.
func probeServer(addr string) (int, string) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return -1, err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second)) // a bound
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
		return 0, err.Error()
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return -1, err.Error()
		}
		return 0, err.Error() // EOF or reset: closed without a response
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// TestDescriptorFlood floods the child (RLIMIT_NOFILE 256) with 600
// idle connections, twice: with the default Concurrency, which the
// descriptor budget clamps to (256-64)*3/4 = 144 so the 503 envelope fires
// before accept runs out of descriptors, and with an explicit Concurrency
// far above the limit, where accept fails with EMFILE and must be retried
// (logged at most once a second) instead of ending Serve.
func TestDescriptorFlood(t *testing.T) {
	for _, tc := range []struct {
		name        string
		concurrency int
	}{{"default concurrency", 0}, {"concurrency above the descriptor limit", 100000}} {
		t.Run(tc.name, func(t *testing.T) {
			srv, addr, conc := startChildServer(t, tc.concurrency)
			if tc.concurrency == 0 && conc != 144 {
				t.Fatalf("default Concurrency under RLIMIT_NOFILE 256 = %d, want (256-64)*3/4 = 144", conc)
			}
			start := time.Now()
			flood := floodDescriptors(addr, 600)
			if len(flood) < 400 {
				t.Fatalf("only %d flood connections opened", len(flood))
			}
			// During the flood: a request past the limit is answered with
			// the 503 envelope or closed, never left hanging. (Past the
			// descriptor limit, with an explicit Concurrency, it waits in
			// the kernel's accept queue until descriptors free up.)
			time.Sleep(200 * time.Millisecond)
			if tc.concurrency != 0 {
				// nothing to probe
			} else if status, body := probeServer(addr); status != 503 && status != 0 {
				t.Errorf("a request during the flood: %d %q; want the 503 envelope or a close", status, body)
			} else if status == 503 && envelopeCode([]byte(body)) != fx.ErrorCodes.ServiceUnavailable {
				t.Errorf("503 without the envelope: %q", body)
			}
			for _, c := range flood {
				c.Close()
			}
			// After the flood: served again.
			deadline := time.Now().Add(15 * time.Second)
			for {
				status, body := probeServer(addr)
				if status == 200 {
					break
				}
				select {
				case <-srv.exited:
					t.Fatalf("the server exited under the flood: %s", srv.output())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("not served again after the flood: %d %q\n%s", status, body, srv.output())
				}
				time.Sleep(50 * time.Millisecond)
			}
			select {
			case <-srv.exited:
				t.Fatalf("the server exited: %s", srv.output())
			default:
			}
			logs := srv.output()
			reports := strings.Count(logs, "accepting a connection failed")
			if secs := int(time.Since(start)/time.Second) + 1; reports > secs {
				t.Errorf("%d accept-failure reports in %d s; want at most one a second:\n%s", reports, secs, logs)
			}
			if tc.concurrency != 0 && reports == 0 {
				t.Errorf("no accept failure was reported; did the flood reach the descriptor limit?\n%s", logs)
			}
			t.Logf("%d flood connections, %d accept-failure reports", len(flood), reports)
		})
	}
}

// Many idle keep-alive connections (issue: scale as connections grow). An
// App holding idleConns connections that each got one response and then
// went quiet must still answer a new client promptly, keep the idle ones
// usable, and give back what they held once they close: the goroutine
// count and the heap return near their level before the connections
// opened. A leak per connection (a limitConn, a lingering entry, a
// goroutine parked on a closed socket) would show as thousands of
// goroutines or megabytes of heap left behind.

const idleConns = 2000

// raiseNofile makes sure the soft RLIMIT_NOFILE is at least n, restoring
// the old limit when the test ends; it skips the test when the hard limit
// is below n.
func raiseNofile(t *testing.T, n uint64) {
	t.Helper()
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Skipf("cannot read RLIMIT_NOFILE: %v", err)
	}
	cur := uint64(rl.Cur) // rl.Cur is int64 on some BSDs
	if cur >= n {
		return
	}
	if uint64(rl.Max) < n {
		t.Skipf("needs %d descriptors (client and server ends of %d connections); the hard RLIMIT_NOFILE is %d", n, idleConns, rl.Max)
	}
	old := rl
	rl.Cur = rl.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Skipf("cannot raise RLIMIT_NOFILE to %d: %v", n, err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}

func TestIdleKeepAliveConnections(t *testing.T) {
	requireSlow(t) // seconds of real-time waits: .ci/run runs it
	raiseNofile(t, 2*idleConns+512)

	// An explicit Concurrency: the default is clamped below the descriptor
	// limit, which is not what this test is about.
	app := quiet(fx.Config{Concurrency: 2 * idleConns})
	app.Get("/hello", func(c *fx.Ctx) error { return c.JSON(200, "hello") })
	// fasthttp keeps a worker goroutine that served a connection for
	// MaxIdleWorkerDuration (10s by default) after the connection closed,
	// to reuse it; shorten that so the goroutines can be seen leaving
	// within the test's bound. It is fasthttp's pool, not a leak.
	app.Server().MaxIdleWorkerDuration = 200 * time.Millisecond
	addr := fxtest.Serve(t, app)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	probe := func(when string) {
		t.Helper()
		start := time.Now()
		resp, err := client.Get("http://" + addr + "/hello")
		if err != nil {
			t.Fatalf("%s: a new request was not answered within 5s: %v", when, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: a new request got %d", when, resp.StatusCode)
		}
		t.Logf("%s: a new request answered in %v", when, time.Since(start))
	}
	probe("before")
	heap0, gr0 := kittest.SettledHeap().HeapAlloc, runtime.NumGoroutine()

	// Cycles of open, idle, close. After the first, the live heap is
	// allowed a little above the level before it: the runtime keeps the
	// descriptor of every goroutine that ever ran (about 0.6 KiB each, to
	// reuse them), so 2,000 connection goroutines leave ~1.2 MiB behind
	// for good. The next cycle reuses them: after it the heap must be back
	// at the cycle before's level, which is what "steady" means here. One
	// reading may come out a MiB high (a collection racing the last
	// connection goroutines' exit, or goroutines other tests left ending),
	// so a cycle that reads high gets one more: a leak grows every cycle,
	// noise does not.
	after := []uint64{idleCycle(t, addr, probe, heap0, gr0, 4<<20)}
	for len(after) < 3 {
		after = append(after, idleCycle(t, addr, probe, heap0, gr0, 4<<20))
		if n := len(after); after[n-1] <= after[n-2]+1<<20 {
			return
		}
	}
	t.Fatalf("live heap after each cycle of %d idle connections %d, %d, %d KiB: it grows per cycle",
		idleConns, after[0]>>10, after[1]>>10, after[2]>>10)
}

// idleCycle opens idleConns connections to addr, each with one request
// answered, checks that the server holds them and still answers (probe and
// a sample of the idle ones), closes them, and waits at most 5s for the
// goroutines to come back to within a few of gr0 and the live heap to
// within heapSlack of heap0; it returns that live heap.
func idleCycle(t *testing.T, addr string, probe func(string), heap0 uint64, gr0 int, heapSlack uint64) uint64 {
	t.Helper()
	// Open the connections from a few dialers at once; then they idle.
	conns := make([]net.Conn, idleConns)
	readers := make([]*bufio.Reader, idleConns)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, idleConns)
	const dialers = 32
	for d := range dialers {
		wg.Go(func() {
			for i := d; i < idleConns; i += dialers {
				c, err := net.DialTimeout("tcp", addr, 5*time.Second)
				if err != nil {
					errs <- fmt.Errorf("dial %d: %w", i, err)
					return
				}
				conns[i], readers[i] = c, bufio.NewReader(c)
				if err := roundTrip(c, readers[i]); err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
					return
				}
				_ = c.SetDeadline(time.Time{})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	heap1, gr1 := kittest.SettledHeap().HeapAlloc, runtime.NumGoroutine()
	t.Logf("%d idle connections: live heap %d → %d KiB, goroutines %d → %d",
		idleConns, heap0>>10, heap1>>10, gr0, gr1)
	// The server holds them: one connection goroutine each. (Counted
	// absolutely: goroutines left by earlier tests may end meanwhile.)
	if gr1 < idleConns {
		t.Fatalf("goroutines %d → %d with %d idle connections: the server is not holding them", gr0, gr1, idleConns)
	}

	probe("with the idle connections open")
	// The idle ones still serve (a sample, so the test stays short).
	for i := 0; i < idleConns; i += 97 {
		if err := roundTrip(conns[i], readers[i]); err != nil {
			t.Fatalf("idle connection %d, second request: %v", i, err)
		}
	}

	for i, c := range conns {
		c.Close()
		conns[i] = nil
	}
	// What the connections held comes back (the heap grew by about 20 KiB
	// per connection, 40 MiB, while they were open).
	const goroutineSlack = 16
	deadline := time.Now().Add(5 * time.Second)
	for {
		heap2, gr2 := kittest.SettledHeap().HeapAlloc, runtime.NumGoroutine()
		if heap2 <= heap0+heapSlack && gr2 <= gr0+goroutineSlack {
			t.Logf("after closing: live heap %d KiB, goroutines %d", heap2>>10, gr2)
			probe("after closing them")
			return heap2
		}
		if time.Now().After(deadline) {
			t.Fatalf("5s after closing %d idle connections: live heap %d KiB (before: %d KiB, open: %d KiB), goroutines %d (before: %d, open: %d)",
				idleConns, heap2>>10, heap0>>10, heap1>>10, gr2, gr0, gr1)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
