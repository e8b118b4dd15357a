package websocket_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/websocket"
)

// A peer that vanished without a word (no FIN, no close: it just stopped
// answering) is found by the ping/pong deadline and its handler's read
// ends.
func TestDeadPeerIsDropped(t *testing.T) {
	ended := make(chan error, 1)
	s := serve(t, func(app *fx.App) {
		app.Get("/ws", websocket.New(func(c *websocket.Conn) error {
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					ended <- err
					return nil
				}
			}
		}, websocket.Config{PingInterval: 50 * time.Millisecond, PongTimeout: 300 * time.Millisecond}))
	})
	rc, err := rawDial(s.addr, "/ws")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close() // never reads, never answers a ping
	select {
	case err := <-ended:
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("the handler's read ended with %v; want the dead-peer timeout", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a silent peer was never dropped")
	}
	// A live peer answers the pings and stays, past many dead-peer
	// deadlines (a pong may take a loaded machine's scheduling delay:
	// PongTimeout leaves it 300 ms).
	live := s.dial(t, "/ws", nil)
	go func() {
		for {
			if _, _, err := live.ReadMessage(); err != nil { // answers pings
				return
			}
		}
	}()
	select {
	case err := <-ended:
		t.Fatalf("a peer answering pings was dropped: %v", err)
	case <-time.After(1500 * time.Millisecond):
	}
}

// A peer that stops reading fills its own send queue and is dropped:
// WriteMessage never blocks the broadcaster, another connection gets every
// message, and the stalled connection's handler ends.
func TestStalledPeerNeverBlocks(t *testing.T) {
	var mu sync.Mutex
	conns := map[string]*websocket.Conn{}
	ended := make(chan string, 2)
	s := serve(t, func(app *fx.App) {
		app.Get("/feed", websocket.New(func(c *websocket.Conn) error {
			name := c.Ctx().Query("name")
			mu.Lock()
			conns[name] = c
			mu.Unlock()
			defer func() { ended <- name }()
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					return nil
				}
			}
		}, websocket.Config{SendQueue: 16}))
	})
	stalled, err := rawDial(s.addr, "/feed?name=stalled")
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	live := s.dial(t, "/feed?name=live", nil)
	const n = 400
	got := make(chan int, 1)
	go func() {
		i := 0
		for i < n {
			if _, _, err := live.ReadMessage(); err != nil {
				break
			}
			i++
		}
		got <- i
	}()
	for {
		mu.Lock()
		k := len(conns)
		mu.Unlock()
		if k == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	msg := []byte(strings.Repeat("x", 64<<10))
	var stalledErr error
	for i := 0; i < n; i++ {
		if err := conns["stalled"].WriteMessage(websocket.BinaryMessage, msg); err != nil && stalledErr == nil {
			stalledErr = err
		}
		if err := conns["live"].WriteMessage(websocket.BinaryMessage, msg); err != nil {
			t.Fatalf("message %d to the live peer: %v", i, err)
		}
		time.Sleep(100 * time.Microsecond) // the live peer reads as fast as it is sent to
	}
	if !errors.Is(stalledErr, websocket.ErrQueueFull) {
		t.Errorf("writes to the stalled peer: %v; want ErrQueueFull", stalledErr)
	}
	if k := <-got; k != n {
		t.Errorf("the live peer got %d of %d messages", k, n)
	}
	select {
	case name := <-ended:
		if name != "stalled" {
			t.Errorf("%s ended first", name)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stalled peer's handler never ended")
	}
}

// The write deadline: a peer that stops reading while the writer is in a
// write is dropped after WriteTimeout, however long its queue.
func TestWriteTimeoutDropsAPeerThatStopsReading(t *testing.T) {
	ended := make(chan time.Time, 1)
	s := serve(t, func(app *fx.App) {
		app.Get("/ws", websocket.New(func(c *websocket.Conn) error {
			msg := []byte(strings.Repeat("y", 256<<10))
			go func() {
				for c.WriteMessage(websocket.BinaryMessage, msg) == nil {
					time.Sleep(time.Millisecond)
				}
			}()
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					ended <- time.Now()
					return nil
				}
			}
		}, websocket.Config{WriteTimeout: 200 * time.Millisecond, SendQueue: 1 << 20}))
	})
	rc, err := rawDial(s.addr, "/ws")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("a peer that stopped reading was never dropped")
	}
}

// The connections of one churn: every way a connection can end.
var endings = []string{"clean", "rst", "half-close", "mid-frame", "panic", "error", "handler-returns"}

// Open and drop many connections in every way, then find goroutines,
// file descriptors and heap back where they started.
func TestChurnLeavesNothingBehind(t *testing.T) {
	total := 10000
	if testing.Short() {
		total = 1000
	}
	s := serve(t, func(app *fx.App) {
		app.Get("/echo", websocket.New(echo))
		app.Get("/panic", websocket.New(func(c *websocket.Conn) error {
			_, _, _ = c.ReadMessage()
			panic("churn")
		}))
		app.Get("/error", websocket.New(func(c *websocket.Conn) error {
			_, _, _ = c.ReadMessage()
			return fx.NewError(409, "APP_CONFLICT", "no")
		}))
		app.Get("/return", websocket.New(func(c *websocket.Conn) error {
			return c.WriteMessage(websocket.TextMessage, []byte("hello"))
		}))
	})
	const workers = 32
	churn := func(n int) (failures []string) {
		var next atomic.Int64
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= n {
						return
					}
					how := endings[i%len(endings)]
					if err := churnOne(s.addr, how); err != nil {
						mu.Lock()
						if len(failures) < 10 {
							failures = append(failures, how+": "+err.Error())
						}
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		return failures
	}
	// Warm up: the server's worker pool, buffer pools and the runtime
	// reach their steady size.
	if f := churn(workers * len(endings)); len(f) > 0 {
		t.Fatalf("warm-up: %v", f)
	}
	s.logs.Reset() // the 1011s are logged with their stacks: not a leak
	g0, fd0, heap0 := settle(t, 0, 0, 0)
	start := time.Now()
	if f := churn(total); len(f) > 0 {
		t.Fatalf("churn: %v", f)
	}
	elapsed := time.Since(start)
	s.logs.Reset()
	g1, fd1, heap1 := settle(t, g0, fd0, heap0)
	t.Logf("%d connections in %v; goroutines %d → %d, fds %d → %d, heap %d KiB → %d KiB",
		total, elapsed.Round(time.Millisecond), g0, g1, fd0, fd1, heap0>>10, heap1>>10)
	if g1 > g0+2 {
		t.Errorf("goroutines %d after the churn, %d before", g1, g0)
	}
	if fd1 > fd0+2 {
		t.Errorf("file descriptors %d after the churn, %d before", fd1, fd0)
	}
	if heap1 > heap0+1<<20 {
		t.Errorf("heap %d KiB after the churn, %d KiB before", heap1>>10, heap0>>10)
	}
}

// churnOne opens one connection and ends it as how says.
func churnOne(addr, how string) error {
	path := map[string]string{"panic": "/panic", "error": "/error", "handler-returns": "/return"}[how]
	if path == "" {
		path = "/echo"
	}
	c, err := rawDial(addr, path)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	switch how {
	case "clean":
		if err := c.send("ping"); err != nil {
			return err
		}
		if op, p, err := c.next(); err != nil || op != 1 || string(p) != "ping" {
			return fmt.Errorf("echo: %d %q %v", op, p, err)
		}
		if _, err := c.Write(closeFrame(1000)); err != nil {
			return err
		}
		if op, _, err := c.next(); err != nil || op != 8 {
			return fmt.Errorf("close answer: %d %v", op, err)
		}
	case "rst":
		_ = c.send("ping")
		_ = c.Conn.(*net.TCPConn).SetLinger(0) // Close sends RST
	case "half-close":
		_ = c.Conn.(*net.TCPConn).CloseWrite()
		if _, err := c.awaitClose(); err == nil {
			return nil
		}
		// The server may close without a frame after the EOF.
	case "mid-frame":
		f := frame(0x1, []byte(strings.Repeat("z", 100)))
		_, _ = c.Write(f[:20])
	case "panic", "error":
		_ = c.send("go")
		code, err := c.awaitClose()
		if err != nil {
			return err
		}
		want := map[string]int{"panic": 1011, "error": 4409}[how]
		if code != want {
			return fmt.Errorf("close %d; want %d", code, want)
		}
	case "handler-returns":
		if op, p, err := c.next(); err != nil || op != 1 || string(p) != "hello" {
			return fmt.Errorf("message: %d %q %v", op, p, err)
		}
		if code, err := c.awaitClose(); err != nil || code != 1000 {
			return fmt.Errorf("close %d %v; want 1000", code, err)
		}
	}
	return nil
}

// settle waits (up to 25 s) for goroutines, descriptors and heap to come
// down to the given marks (none when zero) and returns them. The wait
// covers fasthttp's own reaping of the workers the churn's peak started:
// a worker idle for 10 s is stopped at its pool's next 10-second sweep,
// so up to 20 s after the peak; those are fasthttp's, not a leak. The slack
// (2 goroutines, 2 descriptors, 1 MiB) is the runtime's and the pools'
// own noise; a leak of one goroutine, descriptor or 100 bytes per
// connection is 10,000 of them.
func settle(t *testing.T, g0, fd0 int, heap0 uint64) (g, fd int, heap uint64) {
	t.Helper()
	deadline := time.Now().Add(25 * time.Second)
	for {
		g, fd, heap = runtime.NumGoroutine(), openFDs(t), kittest.SettledHeap().HeapAlloc
		if g0 == 0 || (g <= g0+2 && fd <= fd0+2 && heap <= heap0+1<<20) || time.Now().After(deadline) {
			return g, fd, heap
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// An idle connection costs its handler's goroutine and nothing more: the
// writer runs only while messages are queued (here one message each,
// sent and drained), and pings come from a timer.
func TestIdleConnectionHasOneGoroutine(t *testing.T) {
	var open sync.WaitGroup
	s := serve(t, func(app *fx.App) {
		app.Get("/idle", websocket.New(func(c *websocket.Conn) error {
			if err := c.WriteMessage(websocket.TextMessage, []byte("hi")); err != nil {
				return err
			}
			open.Done()
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					return nil
				}
			}
		}))
	})
	g0, _, _ := settle(t, 0, 0, 0)
	const n = 50
	open.Add(n)
	for i := 0; i < n; i++ {
		c := s.dial(t, "/idle", nil)
		if _, p, err := c.ReadMessage(); err != nil || string(p) != "hi" {
			t.Fatalf("connection %d: %q, %v", i, p, err)
		}
	}
	open.Wait()
	var g int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if g = runtime.NumGoroutine() - g0; g <= n+5 {
			break
		}
	}
	if g > n+5 {
		t.Errorf("%d idle connections hold %d goroutines; want one each (the handler's)", n, g)
	}
}
