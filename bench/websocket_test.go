package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx/internal/kittest"
	gws "github.com/gorilla/websocket"
	"github.com/valyala/fasthttp/fasthttputil"
)

// The WebSocket benchmarks: fx's websocket package beside Fiber's
// WebSocket middleware, with gorilla's client.
//
//	go test -run '^$' -bench 'WS' -benchmem -count 5 .
//
// BenchmarkWSEcho: one message of 32 bytes there and back, in process (an
// in-memory listener: framework cost only) and over loopback TCP.
// BenchmarkWSBroadcast: one message to every one of 1,000 or 10,000
// subscribers (in memory: 10,000 loopback connections would take 20,000
// descriptors in one process), until each has read it.
// BenchmarkWSBroadcastSend: the server's side of a broadcast alone: the
// time Broadcast takes to hand one 64-byte message to each of 1,000
// subscribers over loopback, whose clients are bare sockets that read
// nothing while it runs; each round's frames are read and checked
// afterwards, untimed, so each round starts with empty socket buffers.
// BenchmarkWSIdleMemory: 10,000 idle connections over loopback, opened by
// a child process (so the figures are the server's only): heap and stack
// per connection, and goroutines per connection; fx-header4k is fx with
// the 4 KiB header limit Fiber has (fasthttp's default), which sizes
// fasthttp's read buffer: an idle connection of fx no longer holds it.

var wsServers = []struct {
	name string
	mk   func() *WSServer
}{{"fx", NewFxWS}, {"fiber", NewFiberWS}}

// startWS serves s on ln and stops it at the end of b.
func startWS(b *testing.B, s *WSServer, ln net.Listener) {
	b.Helper()
	go func() { _ = s.Serve(ln) }()
	b.Cleanup(func() {
		done := make(chan struct{})
		go func() { _ = s.Shutdown(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
	})
}

// wsDialer dials ln (in memory) or addr (TCP).
func wsDialer(ln *fasthttputil.InmemoryListener) *gws.Dialer {
	d := &gws.Dialer{HandshakeTimeout: 10 * time.Second}
	if ln != nil {
		d.NetDialContext = func(context.Context, string, string) (net.Conn, error) { return ln.Dial() }
	}
	return d
}

func BenchmarkWSEcho(b *testing.B) {
	msg := []byte(strings.Repeat("m", 32))
	for _, srv := range wsServers {
		for _, where := range []string{"inprocess", "loopback"} {
			b.Run(srv.name+"/"+where, func(b *testing.B) {
				s := srv.mk()
				var mem *fasthttputil.InmemoryListener
				var ln net.Listener
				if where == "inprocess" {
					mem = fasthttputil.NewInmemoryListener()
					ln = mem
				} else {
					var err error
					if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
						b.Fatal(err)
					}
				}
				startWS(b, s, ln)
				c, _, err := wsDialer(mem).Dial("ws://"+ln.Addr().String()+"/echo", nil)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				roundTrip := func() {
					if err := c.WriteMessage(gws.BinaryMessage, msg); err != nil {
						b.Fatal(err)
					}
					if _, _, err := c.ReadMessage(); err != nil {
						b.Fatal(err)
					}
				}
				for range 500 { // warm up: the first server of the process runs first
					roundTrip()
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					roundTrip()
				}
			})
		}
	}
}

func BenchmarkWSBroadcast(b *testing.B) {
	msg := []byte(strings.Repeat("b", 64))
	for _, n := range []int{1000, 10000} {
		for _, srv := range wsServers {
			b.Run(fmt.Sprintf("%s/%d", srv.name, n), func(b *testing.B) {
				s := srv.mk()
				mem := fasthttputil.NewInmemoryListener()
				startWS(b, s, mem)
				d := wsDialer(mem)
				var got atomic.Int64
				round := make(chan struct{}, 1)
				var wg sync.WaitGroup
				conns := make([]*gws.Conn, 0, n)
				for i := 0; i < n; i++ {
					c, _, err := d.Dial("ws://fx/sub", nil)
					if err != nil {
						b.Fatalf("subscriber %d: %v", i, err)
					}
					conns = append(conns, c)
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							if _, _, err := c.ReadMessage(); err != nil {
								return
							}
							if got.Add(1)%int64(n) == 0 {
								round <- struct{}{}
							}
						}
					}()
				}
				defer func() {
					b.StopTimer() // the tear-down of n connections is not the broadcast's
					for _, c := range conns {
						c.Close()
					}
					wg.Wait()
				}()
				for s.Subscribers() < n {
					time.Sleep(time.Millisecond)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if k := s.Broadcast(msg); k != n {
						b.Fatalf("broadcast to %d of %d", k, n)
					}
					select {
					case <-round:
					case <-time.After(30 * time.Second):
						b.Fatalf("a round of %d was not received: %d messages", n, got.Load())
					}
				}
			})
		}
	}
}

// sendSubscribers is the count of BenchmarkWSBroadcastSend: 10,000
// loopback connections would take 20,000 descriptors in one process.
const sendSubscribers = 1000

func BenchmarkWSBroadcastSend(b *testing.B) {
	msg := []byte(strings.Repeat("b", 64))
	const frame = 2 + 64 // a server's frame: 2 bytes of header, no mask
	for _, srv := range wsServers {
		b.Run(fmt.Sprintf("%s/%d", srv.name, sendSubscribers), func(b *testing.B) {
			s := srv.mk()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			startWS(b, s, ln)
			conns := make([]net.Conn, 0, sendSubscribers)
			defer func() {
				b.StopTimer() // the tear-down is not the broadcast's
				for _, c := range conns {
					c.Close()
				}
			}()
			for i := 0; i < sendSubscribers; i++ {
				c, err := dialBareWS(ln.Addr().String(), "/sub")
				if err != nil {
					b.Fatalf("subscriber %d: %v", i, err)
				}
				conns = append(conns, c)
			}
			for s.Subscribers() < sendSubscribers {
				time.Sleep(time.Millisecond)
			}
			// No client reads while a broadcast is timed (each frame
			// waits in its socket's buffer), so no client goroutine
			// competes with the server for the CPU; the frames are read
			// after each round, untimed, one client after the other.
			buf := make([]byte, frame)
			round := func(i int) {
				if k := s.Broadcast(msg); k != sendSubscribers {
					b.Fatalf("broadcast to %d of %d", k, sendSubscribers)
				}
				b.StopTimer()
				for j, c := range conns {
					_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
					if _, err := io.ReadFull(c, buf); err != nil || buf[0] != 0x81 || buf[1] != 64 {
						b.Fatalf("round %d, subscriber %d: % x %v", i, j, buf[:2], err)
					}
				}
				b.StartTimer()
			}
			round(0) // warm up: every socket has carried a frame
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				round(i + 1)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/sendSubscribers, "ns/subscriber")
		})
	}
}

// dialBareWS opens a WebSocket to path on addr with a bare handshake and
// reads the 101 (a small head: one read), for clients that only count
// bytes.
func dialBareWS(addr, path string) (net.Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	req := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		c.Close()
		return nil, err
	}
	buf := make([]byte, 512)
	k, err := c.Read(buf)
	if err != nil || !strings.HasPrefix(string(buf[:k]), "HTTP/1.1 101") || !strings.HasSuffix(string(buf[:k]), "\r\n\r\n") {
		c.Close()
		return nil, fmt.Errorf("handshake: %q %v", buf[:k], err)
	}
	return c, nil
}

// idleConns is the count of BenchmarkWSIdleMemory.
const idleConns = 10000

func BenchmarkWSIdleMemory(b *testing.B) {
	for _, srv := range append(wsServers[:len(wsServers):len(wsServers)], struct {
		name string
		mk   func() *WSServer
	}{"fx-header4k", NewFxWSHeader4K}) {
		b.Run(srv.name, func(b *testing.B) {
			s := srv.mk()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			startWS(b, s, ln)
			for b.Loop() {
				heap, stack, g := idleCost(b, s, ln.Addr().String())
				b.ReportMetric(heap, "heap-B/conn")
				b.ReportMetric(stack, "stack-B/conn")
				b.ReportMetric(g, "goroutines/conn")
			}
		})
	}
}

// idleCost opens idleConns connections to /sub from a child process,
// measures the server's growth, and closes them.
func idleCost(b *testing.B, s *WSServer, addr string) (heapPer, stackPer, gPer float64) {
	before := memNow()
	g0 := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestWSIdleDialer$")
	cmd.Env = append(os.Environ(), "FX_WS_IDLE_ADDR="+addr, "FX_WS_IDLE_N="+strconv.Itoa(idleConns))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready") {
		b.Fatalf("dialer: %q %v", line, err)
	}
	deadline := time.Now().Add(time.Minute)
	for s.Subscribers() < idleConns && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if k := s.Subscribers(); k < idleConns {
		b.Fatalf("%d of %d subscribers", k, idleConns)
	}
	after := memNow()
	g1 := runtime.NumGoroutine()
	stdin.Close() // the child closes its connections and exits
	_ = cmd.Wait()
	for s.Subscribers() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return float64(after.heap-before.heap) / idleConns, float64(after.stack-before.stack) / idleConns,
		float64(g1-g0) / idleConns
}

type memFigures struct{ heap, stack int64 }

func memNow() memFigures {
	ms := kittest.SettledHeap()
	return memFigures{heap: int64(ms.HeapInuse), stack: int64(ms.StackInuse)}
}

// TestWSIdleDialer is the child process of BenchmarkWSIdleMemory: with
// FX_WS_IDLE_ADDR set it opens FX_WS_IDLE_N connections to /sub (a bare
// handshake each, then nothing), prints "ready", and closes them when its
// standard input closes. Without it, it does nothing.
func TestWSIdleDialer(t *testing.T) {
	addr := os.Getenv("FX_WS_IDLE_ADDR")
	if addr == "" {
		t.Skip("the child process of BenchmarkWSIdleMemory")
	}
	n, _ := strconv.Atoi(os.Getenv("FX_WS_IDLE_N"))
	conns := make([]net.Conn, 0, n)
	for i := 0; i < n; i++ {
		c, err := dialBareWS(addr, "/sub")
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	for _, c := range conns {
		c.Close()
	}
}
