//go:build linux

package fx_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fxhq/fx/client"
	"github.com/fxhq/fx/internal/deploytest"
)

// Deploys that drop nothing (docs/reliability.md). These tests build
// testdata/deployd, run it as a real process on 127.0.0.1, and replace it
// five times while a bounded load runs: 50 keep-alive connections of
// GET /work?ms=2 through net/http, and 4 callers POSTing through
// fx/client with idempotency keys. The load lasts the five replacements
// (about 6-10 s on a busy machine) rather than 20 s, to keep CI short.
//
// They build a binary and run seconds of load, so they run only with
// FX_DEPLOY_TEST=1: .ci/run has a block of its own for them.
//
//   - TestDeployHandOff: SIGHUP hands the socket to a new process of
//     the (replaced) binary (App.HandOff): 0 failed requests, 0 resets,
//     every POST executed exactly once.
//   - TestDeploySocketActivation: the test holds the socket, as systemd
//     does, and passes it with LISTEN_FDS; each replacement is a plain
//     stop (SIGTERM, drain) then start: 0 failed requests, 0 resets.
//   - TestDeployPlainRestartFails: the same stop-then-start, each
//     process listening itself: requests fail (refused, reset), which
//     shows the load can see what the two others avoid.

const (
	deployConns    = 50
	deployPosters  = 4
	deployReplaces = 5
)

func TestDeployHandOff(t *testing.T) {
	d := startDeploy(t, "handoff")
	d.run(t, func(i int) {
		old, _ := d.HandOff(t)
		deploytest.WaitGone(t, old)
	})
	d.requireClean(t)
}

// TestDeployHandOffFailureKeepsServing: a new binary that fails before
// it is ready (here it exits at once) leaves the old process serving, as
// if nothing happened; the next hand-off, to a good binary, succeeds, and
// a request in flight in the old process during it is answered, with
// Connection: close, before a clean end of stream.
func TestDeployHandOffFailureKeepsServing(t *testing.T) {
	d := startDeploy(t, "handoff")
	old := d.PID(t)
	if err := os.WriteFile(d.Bin+".new", []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(d.Bin+".new", d.Bin); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(old, syscall.SIGHUP)
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(d.Out.Name())
		if strings.Contains(string(b), "upgrade failed") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no \"upgrade failed\" logged; output:\n%s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Get("http://" + d.Addr + "/work")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Pid") != strconv.Itoa(old) || d.PID(t) != old {
		t.Fatalf("after a failed hand-off: status %d from pid %s, PID file %d; want 200 from %d",
			resp.StatusCode, resp.Header.Get("X-Pid"), d.PID(t), old)
	}
	// A busy connection during the hand-off: its response comes, with
	// Connection: close, and then a clean end of stream.
	busy, err := net.Dial("tcp", d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if _, err := io.WriteString(busy, "GET /until-drain HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the request is in its handler
	d.HandOff(t)
	busy.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(busy)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the request in flight during the hand-off: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "ok" || !resp.Close || resp.Header.Get("X-Pid") != strconv.Itoa(old) {
		t.Errorf("in flight during the hand-off: %d %q close=%v from pid %s; want 200 \"ok\" with Connection: close from %d",
			resp.StatusCode, body, resp.Close, resp.Header.Get("X-Pid"), old)
	}
	if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("after the last response: %d bytes, %v; want a clean end of stream", n, err)
	}
	deploytest.WaitGone(t, old)
	last := d.PID(t)
	syscall.Kill(last, syscall.SIGTERM)
	deploytest.WaitGone(t, last)
}

// TestDeployUploadDuringHandOff: the uploads of
// TestRunSignalAnswersUploadsInFlight, with SIGHUP (the hand-off) instead
// of SIGTERM: the whole upload is answered by the old process, 200 with
// Connection: close; the one 12 bytes short is answered 408 with
// Connection: close within the old process's grace period (3 s); and the
// old process's Run returns nil. Before, the short one got no byte back
// and the old process ended with "grace period ... ended with requests
// still running".
func TestDeployUploadDuringHandOff(t *testing.T) {
	const grace = 3 * time.Second
	t.Setenv("GRACE", grace.String())
	d := startDeploy(t, "handoff")
	old := d.PID(t)
	began := make(chan time.Time, 1)
	hup := func() {
		began <- time.Now()
		_ = syscall.Kill(old, syscall.SIGHUP)
	}
	uploadsThroughShutdown(t, d.Addr, hup, began, grace, strconv.Itoa(old))
	deploytest.WaitGone(t, old)
	next := d.PID(t)
	if next == old {
		t.Fatal("no new process took over")
	}
	if b, _ := os.ReadFile(d.Out.Name()); strings.Contains(string(b), "grace period") {
		t.Errorf("the old process's Run failed:\n%s", b)
	}
	syscall.Kill(next, syscall.SIGTERM)
	deploytest.WaitGone(t, next)
}

func TestDeployPlainRestartFails(t *testing.T) {
	d := startDeploy(t, "plain")
	d.run(t, func(i int) {
		old := d.PID(t)
		syscall.Kill(old, syscall.SIGTERM)
		deploytest.WaitGone(t, old)
		d.start(t)
	})
	s, l := &d.stats, d.load
	t.Logf("plain restart: %d requests, %d failed (%d refused), %d resets; POSTs %d, failed %d",
		l.OK.Load()+l.Failed.Load(), l.Failed.Load(), s.refused.Load(), s.resets.Load(), s.posts.Load(), s.postFailed.Load())
	if l.Failed.Load() == 0 && s.resets.Load() == 0 {
		t.Fatal("a plain restart under load lost nothing: the load cannot see a drop, and the two other tests prove nothing")
	}
}

// deploy is one test's server: its binary and processes (Deployed), its
// mode and the load's figures.
type deploy struct {
	*deploytest.Deployed
	mode    string   // handoff, activation, plain
	execLog string   // where POST /orders records each execution
	sock    *os.File // activation: the socket the test holds, as systemd does

	load  *deploytest.GetLoad // the GETs, during run
	stats deployStats
}

// deployStats is what the load saw beside the GETs' answers (load).
type deployStats struct {
	refused, resets                atomic.Int64
	posts, postFailed, postRetried atomic.Int64
	mu                             sync.Mutex
	keys                           []string // keys of the POSTs answered 201
}

var deployBuild struct {
	once sync.Once
	path string
	err  error
}

// The deploy tests' server binary, built once for all of them
// (buildDeployd), is removed when the package's tests end (TestMain).
func init() {
	afterTests = append(afterTests, func() {
		if deployBuild.path != "" {
			os.RemoveAll(filepath.Dir(deployBuild.path))
		}
	})
}

// buildDeployd builds testdata/deployd once per test binary; TestMain
// removes it.
func buildDeployd(t *testing.T) string {
	deployBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "fx-deployd")
		if err != nil {
			deployBuild.err = err
			return
		}
		deployBuild.path = filepath.Join(dir, "deployd")
		cmd := exec.Command("go", "build", "-o", deployBuild.path, "./testdata/deployd")
		if out, err := cmd.CombinedOutput(); err != nil {
			deployBuild.err = fmt.Errorf("go build ./testdata/deployd: %v\n%s", err, out)
		}
	})
	if deployBuild.err != nil {
		t.Fatal(deployBuild.err)
	}
	return deployBuild.path
}

func startDeploy(t *testing.T, mode string) *deploy {
	deploytest.RequireDeployTest(t)
	ln := listenLoopback(t)
	d := &deploy{Deployed: deploytest.NewDeployed(t, buildDeployd(t), ln.Addr().String()), mode: mode}
	d.execLog = filepath.Join(filepath.Dir(d.PIDFile), "exec.log")
	if mode == "activation" {
		sock, err := ln.(*net.TCPListener).File()
		if err != nil {
			t.Fatal(err)
		}
		d.sock = sock
		t.Cleanup(func() { d.sock.Close() })
	}
	ln.Close() // the test's own descriptor; in activation mode d.sock keeps the socket
	d.start(t)
	return d
}

// start starts a new generation and waits until it has written its PID.
func (d *deploy) start(t *testing.T) {
	var cmd *exec.Cmd
	switch d.mode {
	case "activation":
		// As systemd does: the socket as descriptor 3, LISTEN_PID the
		// process's own (the shell execs the server, keeping its PID).
		cmd = exec.Command("/bin/sh", "-c", `LISTEN_PID=$$ LISTEN_FDS=1 LISTEN_FDNAMES=http exec "$0"`, d.Bin)
		cmd.ExtraFiles = []*os.File{d.sock}
	case "handoff":
		cmd = exec.Command(d.Bin)
		cmd.Env = append(os.Environ(), "UPGRADE=1")
	default:
		cmd = exec.Command(d.Bin)
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "EXECLOG="+d.execLog)
	d.Start(t, cmd)
}

// countingConn counts the resets (ECONNRESET, EPIPE) its reads and writes
// meet: a connection closed cleanly ends with EOF, never with these.
type countingConn struct {
	net.Conn
	resets *atomic.Int64
}

func (c countingConn) note(err error) {
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		c.resets.Add(1)
	}
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.note(err)
	return n, err
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.note(err)
	return n, err
}

func (d *deploy) transport() *http.Transport {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				if errors.Is(err, syscall.ECONNREFUSED) {
					d.stats.refused.Add(1)
				}
				return nil, err
			}
			return countingConn{c, &d.stats.resets}, nil
		},
		MaxConnsPerHost:     deployConns + deployPosters,
		MaxIdleConnsPerHost: deployConns + deployPosters,
		DisableCompression:  true,
	}
}

// run drives the load while replace is called deployReplaces times, a
// second apart, then stops the last generation and waits for it.
func (d *deploy) run(t *testing.T, replace func(i int)) {
	tr := d.transport()
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 15 * time.Second}
	fc := client.New(client.Config{BaseURL: "http://" + d.Addr, HTTPClient: hc})
	d.load = deploytest.StartGetLoad(hc, "http://"+d.Addr+"/work?ms=2", deployConns)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	s := &d.stats
	// each keeps n clients calling one until stop is closed.
	each := func(n int, one func()) {
		for range n {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
						one()
					}
				}
			})
		}
	}
	each(deployPosters, func() {
		r := &client.Request{Method: http.MethodPost, Path: "/orders", Body: []byte(`{}`)}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		resp, err := fc.Do(ctx, r)
		cancel()
		s.posts.Add(1)
		if err != nil || resp.Status != 201 {
			s.postFailed.Add(1)
			d.load.Fail(fmt.Sprintf("POST: %v", err))
			return
		}
		if resp.Attempts > 1 {
			s.postRetried.Add(1)
		}
		s.mu.Lock()
		s.keys = append(s.keys, r.IdempotencyKey)
		s.mu.Unlock()
	})
	time.Sleep(time.Second)
	for i := range deployReplaces {
		replace(i)
		time.Sleep(time.Second)
	}
	close(stop)
	wg.Wait()
	d.load.Stop()
	last := d.PID(t)
	syscall.Kill(last, syscall.SIGTERM)
	deploytest.WaitGone(t, last)
}

// requireClean holds the load to 0 failed requests, 0 resets, and every
// POST executed exactly once, by at least deployReplaces+1 processes.
func (d *deploy) requireClean(t *testing.T) {
	s, l := &d.stats, d.load
	pids := l.ServedBy()
	t.Logf("%s: %d GETs over %d processes, %d failed (%d refused), %d resets; %d POSTs, %d failed, %d retried",
		d.mode, l.OK.Load()+l.Failed.Load(), len(pids), l.Failed.Load(), s.refused.Load(), s.resets.Load(),
		s.posts.Load(), s.postFailed.Load(), s.postRetried.Load())
	if l.Failed.Load() != 0 || s.resets.Load() != 0 || s.postFailed.Load() != 0 {
		t.Errorf("lost requests: %d failed, %d resets, %d POSTs failed; first errors: %q",
			l.Failed.Load(), s.resets.Load(), s.postFailed.Load(), l.Errors())
	}
	if len(pids) < deployReplaces+1 {
		t.Errorf("GETs were served by %d processes, want %d: %v", len(pids), deployReplaces+1, pids)
	}
	if l.OK.Load() < 1000 || len(s.keys) < 50 {
		t.Errorf("too little load to prove anything: %d GETs, %d POSTs", l.OK.Load(), len(s.keys))
	}
	f, err := os.Open(d.execLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	execs := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, _, _ := strings.Cut(sc.Text(), " ")
		execs[strings.Trim(key, `"`)]++
	}
	for _, k := range s.keys {
		if execs[k] != 1 {
			t.Errorf("POST with key %s answered 201 but executed %d times", k, execs[k])
		}
		delete(execs, k)
	}
	for k, n := range execs {
		t.Errorf("POST with key %s executed %d times but never answered 201", k, n)
	}
}

// TestReusePortResetsTheClosingQueue shows why the hand-off shares one
// socket instead of binding a second one with SO_REUSEPORT: the kernel
// spreads connections over the two sockets' queues, and closing the old
// socket resets the connections still waiting in its queue, though the
// new socket is listening on the same port. (Not gated: no binary, no
// load; 40 loopback connections.)
func TestReusePortResetsTheClosingQueue(t *testing.T) {
	if !slices.Contains([]string{"amd64", "arm64", "386", "arm", "riscv64", "ppc64le", "s390x", "loong64"}, runtime.GOARCH) {
		t.Skip("SO_REUSEPORT is 15 on this test's architectures only")
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, 0xf /* SO_REUSEPORT on Linux (x86, arm) */, 1)
		})
		return errors.Join(err, serr)
	}}
	old, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	next, err := lc.Listen(context.Background(), "tcp", old.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	go func() { // the new process accepts and answers
		for {
			c, err := next.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.Read(make([]byte, 512))
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			}()
		}
	}()
	const n = 40
	conns := make([]net.Conn, 0, n)
	for range n { // connected: each waits in one of the two queues
		c, err := net.Dial("tcp", old.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		conns = append(conns, c)
	}
	time.Sleep(100 * time.Millisecond)
	old.Close() // the old process stops, never having accepted
	resets, answered := 0, 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, err := io.ReadAll(c)
		switch {
		case errors.Is(err, syscall.ECONNRESET):
			resets++
		case strings.HasPrefix(string(b), "HTTP/1.1 200"):
			answered++
		}
	}
	t.Logf("SO_REUSEPORT, old socket closed: %d of %d connections reset, %d answered by the new socket", resets, n, answered)
	if resets == 0 {
		t.Fatal("no connection was reset: closing a SO_REUSEPORT socket kept its queue (the hand-off's reason to share one socket no longer holds)")
	}
}
