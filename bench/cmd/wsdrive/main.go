// Command wsdrive runs one WebSocket server of the bench module (fx's or
// Fiber's, bench.NewFxWS and bench.NewFiberWS) in one process and drives
// it over loopback from another, so that a tool attached to the server
// counts the server's work alone: its system calls (perf stat on the
// syscall tracepoints, strace -c) or its instructions (valgrind's
// cachegrind), which the load of a shared machine does not move the way
// it moves wall-clock time.
//
// The server (-mode serve) prints "ready" once it listens and exits when
// its standard input closes; with -subs it first waits for that many
// subscribers on /sub, broadcasts -n 64-byte messages to them (20 ms
// apart, so each round finds empty socket buffers) and then waits for
// its input to close. The clients: -mode echo sends -n 32-byte messages
// to /echo one at a time, each after the previous answer (gorilla's
// client), and prints the mean round trip; -mode sub opens -subs
// subscribers on /sub and reads -n messages on each.
//
// Counting a server's instructions per round trip: run it twice, with
// two -n, and divide the difference of the counts by the difference of
// n (the start and the handshake cancel out). In bench/:
//
//	go build -o /tmp/wsdrive ./cmd/wsdrive
//	mkfifo /tmp/ws.in
//	GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off \
//	  valgrind --tool=cachegrind --cache-sim=no /tmp/wsdrive -fw fx </tmp/ws.in &
//	exec 3>/tmp/ws.in; sleep 5   # until it prints ready
//	go run ./cmd/wsdrive -mode echo -n 500; exec 3>&-; wait
//
// then the same with -n 5500 (and -fw fiber). cpu.rdtscp=off keeps the
// runtime from the RDTSCP instruction, which valgrind does not know;
// asyncpreemptoff keeps out the preemption signal, which it handles
// badly. For system calls, perf stat -e 'syscalls:sys_enter_*' in place
// of valgrind. Only 127.0.0.1 is used.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fxhq/fx/bench"
	gws "github.com/gorilla/websocket"
)

func main() {
	mode := flag.String("mode", "serve", "serve, echo or sub")
	fw := flag.String("fw", "fx", "the server: fx or fiber")
	addr := flag.String("addr", "127.0.0.1:18300", "the server's address (127.0.0.1 only)")
	n := flag.Int("n", 1000, "echo round trips, or broadcast rounds")
	subs := flag.Int("subs", 0, "subscribers (serve: broadcast to them, then wait)")
	flag.Parse()
	if host, _, err := net.SplitHostPort(*addr); err != nil || host != "127.0.0.1" {
		fail(fmt.Errorf("-addr %q: only 127.0.0.1 is used", *addr))
	}
	var err error
	switch *mode {
	case "serve":
		err = serve(*fw, *addr, *n, *subs)
	case "echo":
		err = echo(*addr, *n)
	case "sub":
		err = subscribe(*addr, *subs, *n)
	default:
		err = fmt.Errorf("-mode %q: want serve, echo or sub", *mode)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "wsdrive:", err)
	os.Exit(1)
}

// serve serves fw's server on addr until its standard input closes,
// broadcasting n rounds to subs subscribers first when subs > 0.
func serve(fw, addr string, n, subs int) error {
	var s *bench.WSServer
	switch fw {
	case "fx":
		s = bench.NewFxWS()
	case "fiber":
		s = bench.NewFiberWS()
	default:
		return fmt.Errorf("-fw %q: want fx or fiber", fw)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	go func() { _ = s.Serve(ln) }()
	fmt.Println("ready")
	if subs > 0 {
		for s.Subscribers() < subs {
			time.Sleep(5 * time.Millisecond)
		}
		msg := []byte(strings.Repeat("b", 64))
		for i := 0; i < n; i++ {
			if k := s.Broadcast(msg); k != subs {
				return fmt.Errorf("broadcast to %d of %d", k, subs)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	return nil
}

// echo makes n round trips of a 32-byte message on /echo.
func echo(addr string, n int) error {
	c, _, err := gws.DefaultDialer.Dial("ws://"+addr+"/echo", nil)
	if err != nil {
		return err
	}
	defer c.Close()
	msg := []byte(strings.Repeat("m", 32))
	t0 := time.Now()
	for i := 0; i < n; i++ {
		if err := c.WriteMessage(gws.BinaryMessage, msg); err != nil {
			return err
		}
		if _, _, err := c.ReadMessage(); err != nil {
			return err
		}
	}
	fmt.Printf("%d round trips, %.2f µs each\n", n, float64(time.Since(t0).Nanoseconds())/float64(n)/1e3)
	return nil
}

// subscribe opens subs connections to /sub and reads n messages on each.
func subscribe(addr string, subs, n int) error {
	conns := make([]*gws.Conn, 0, subs)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < subs; i++ {
		c, _, err := gws.DefaultDialer.Dial("ws://"+addr+"/sub", nil)
		if err != nil {
			return fmt.Errorf("subscriber %d: %w", i, err)
		}
		conns = append(conns, c)
	}
	errs := make(chan error, subs)
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < n; k++ {
				if _, _, err := c.ReadMessage(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Println(subs*n, "messages")
	return nil
}
