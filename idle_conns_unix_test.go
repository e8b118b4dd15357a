//go:build unix

package fx_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
)

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

// settledHeap runs the collector until pools are emptied (sync.Pool keeps
// its items for two cycles) and returns the live heap (HeapAlloc right
// after a collection) and the goroutine count.
func settledHeap() (heap uint64, goroutines int) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, runtime.NumGoroutine()
}

func TestIdleKeepAliveConnections(t *testing.T) {
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
	heap0, gr0 := settledHeap()

	// Two cycles of open, idle, close. After the first, the live heap is
	// allowed a little above the level before it: the runtime keeps the
	// descriptor of every goroutine that ever ran (about 0.6 KiB each, to
	// reuse them), so 2,000 connection goroutines leave ~1.2 MiB behind
	// for good. The second cycle reuses them: after it the heap must be back
	// at the first cycle's level, which is what "steady" means here.
	heapAfter1 := idleCycle(t, addr, probe, heap0, gr0, 4<<20)
	heapAfter2 := idleCycle(t, addr, probe, heap0, gr0, 4<<20)
	if heapAfter2 > heapAfter1+1<<20 {
		t.Fatalf("live heap after the first cycle of %d idle connections %d KiB, after the second %d KiB: it grows per cycle",
			idleConns, heapAfter1>>10, heapAfter2>>10)
	}
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
	heap1, gr1 := settledHeap()
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
		heap2, gr2 := settledHeap()
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
