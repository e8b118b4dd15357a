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
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fxhq/fx"
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

// childServer starts the child with the given Config.Concurrency (0: the
// default) and returns its address, its Concurrency, its stderr so far
// (a func) and a channel closed when it exits.
func childServer(t *testing.T, concurrency int) (addr string, conc int, stderr func() string, exited <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildServer$", "-test.count=1")
	cmd.Env = append(os.Environ(), childServerEnv+"="+strconv.Itoa(concurrency))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errBuf logBuffer
	cmd.Stderr = &errBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var out strings.Builder
	var outMu sync.Mutex
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			outMu.Lock()
			out.WriteString(sc.Text() + "\n")
			outMu.Unlock()
			if strings.HasPrefix(sc.Text(), "addr=") {
				lines <- sc.Text()
			}
		}
		_ = cmd.Wait() // the exit is reported through done
		close(done)
	}()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	select {
	case l := <-lines:
		if _, err := fmt.Sscanf(l, "addr=%s concurrency=%d", &addr, &conc); err != nil {
			t.Fatalf("child said %q: %v", l, err)
		}
	case <-done:
		outMu.Lock()
		defer outMu.Unlock()
		t.Fatalf("child exited: %s %s", out.String(), errBuf.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("child did not start")
	}
	return addr, conc, errBuf.String, done
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
			addr, conc, stderr, exited := childServer(t, tc.concurrency)
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
				case <-exited:
					t.Fatalf("the server exited under the flood: %s", stderr())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("not served again after the flood: %d %q\n%s", status, body, stderr())
				}
				time.Sleep(50 * time.Millisecond)
			}
			select {
			case <-exited:
				t.Fatalf("the server exited: %s", stderr())
			default:
			}
			logs := stderr()
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
