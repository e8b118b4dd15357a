// Package redistest runs a real redis-server for the tests and benchmarks
// of fx's Redis stores: a child process on a free loopback port, without
// persistence, killed when the test ends. It is the one place a test
// starts, stops, pauses or restarts Redis; nothing in fx tests Redis
// against a mock.
//
// Without redis-server on PATH a test that asks for one is skipped, except
// under CI (CI=true), where that is a failure: CI installs it.
package redistest

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is a redis-server child process listening on Addr (127.0.0.1).
type Server struct {
	// Addr is host:port, for redis.Options.Addr.
	Addr string

	tb     testing.TB
	cmd    *exec.Cmd
	exited chan struct{}
	once   sync.Once
}

// Start starts redis-server on a free loopback port (never 6379) and waits
// until it answers PING. The server is killed at the test's cleanup.
func Start(tb testing.TB) *Server {
	tb.Helper()
	var lastErr error
	for range 3 { // the free port can be taken between Close and redis binding it
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		s, err := start(tb, "127.0.0.1:"+port)
		if err == nil {
			return s
		}
		lastErr = err
	}
	tb.Fatalf("redis-server did not start: %v", lastErr)
	return nil
}

// Stop kills the server and waits for it to exit. It may be called more
// than once; cleanup calls it too.
func (s *Server) Stop() {
	s.once.Do(func() {
		_ = s.cmd.Process.Kill() // may have exited already
		<-s.exited
	})
}

// Restart starts a new, empty redis-server on the same address after Stop
// and waits until it answers, failing the test when it cannot.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Stop()
	n, err := start(s.tb, s.Addr)
	if err != nil {
		s.tb.Fatalf("redis-server did not restart on %s: %v", s.Addr, err)
	}
	s.cmd, s.exited, s.once = n.cmd, n.exited, sync.Once{} // n's cleanup stops it
}

// Pause stops the process (SIGSTOP): its connections stay open and nothing
// answers, as with a hung server. Resume lets it go on (SIGCONT).
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume ends a Pause.
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.tb.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.tb.Fatal(err)
	}
}

// start runs redis-server on addr and waits for its PING.
func start(tb testing.TB, addr string) (*Server, error) {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatal("redis-server is not on PATH; CI must install it (apt-get install redis-server)")
		}
		tb.Skip("redis-server is not on PATH: install it (apt-get install redis-server) to run the Redis tests")
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	s := &Server{Addr: addr, tb: tb, cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.exited) }() // killed on purpose: its error says so
	tb.Cleanup(s.Stop)
	if err := s.waitPing(); err != nil {
		s.Stop()
		return nil, errors.New(err.Error() + "; output: " + out.String())
	}
	return s, nil
}

// waitPing waits up to 10 s for PING to answer +PONG, or for the process
// to exit.
func (s *Server) waitPing() error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := ping(s.Addr)
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return err
		default:
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ping sends one PING in the Redis protocol and reads its answer, within
// a second.
func ping(addr string) error { return pingWithin(addr, time.Second) }

// pingWithin is ping with the answer awaited for d.
func pingWithin(addr string, d time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(d))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return errors.New("PING answered " + strconv.Quote(line))
	}
	return nil
}
