package deploytest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// RequireDeployTest skips t unless FX_DEPLOY_TEST=1: a deploy test builds
// a binary and runs seconds of load, so it runs in .ci/run's deploy block.
func RequireDeployTest(t testing.TB) {
	t.Helper()
	if os.Getenv("FX_DEPLOY_TEST") != "1" {
		t.Skip("builds a binary and runs seconds of load: set FX_DEPLOY_TEST=1 (.ci/run does)")
	}
}

// Deployed is a built server that a deploy test runs as real processes,
// one generation after another, on one loopback address. Bin is a copy of
// Built (Replace copies it again, as a deploy does); each generation
// writes its PID to PIDFile once it serves, and its standard output and
// error go to Out (a file, not a pipe: a handed-off generation outlives
// the process that started it).
type Deployed struct {
	Built, Bin, PIDFile, Addr string
	Out                       *os.File

	mu      sync.Mutex
	started []*exec.Cmd
}

// NewDeployed copies built as Bin (its name without a ".build" suffix)
// into a new temporary directory, where PIDFile and Out are too, for a
// server on addr. When the test ends,
// every generation is killed (the one PIDFile names and each Start
// started) and, if the test failed, Out is logged.
func NewDeployed(t testing.TB, built, addr string) *Deployed {
	t.Helper()
	dir := t.TempDir()
	d := &Deployed{Built: built, Bin: filepath.Join(dir, strings.TrimSuffix(filepath.Base(built), ".build")), PIDFile: filepath.Join(dir, "pid"), Addr: addr}
	d.Replace(t)
	var err error
	if d.Out, err = os.Create(filepath.Join(dir, "out.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if pid, err := ReadPID(d.PIDFile); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		d.mu.Lock()
		for _, c := range d.started {
			c.Process.Kill()
		}
		d.mu.Unlock()
		if t.Failed() {
			b, _ := os.ReadFile(d.Out.Name())
			t.Logf("server output:\n%s", b)
		}
		d.Out.Close()
	})
	return d
}

// Replace puts a new copy of Built at Bin (ReplaceBinary).
func (d *Deployed) Replace(t testing.TB) {
	t.Helper()
	ReplaceBinary(t, d.Built, d.Bin)
}

// Start starts cmd, a new generation (of Bin, or of a shell that execs
// it), with ADDR and PIDFILE added to its environment (cmd.Env, or the
// test's when nil) and its output to Out; it reaps the process when it
// exits and returns its PID once the generation has written it (a PID
// other than the one PIDFile named before).
func (d *Deployed) Start(t testing.TB, cmd *exec.Cmd) int {
	t.Helper()
	old, _ := ReadPID(d.PIDFile)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "ADDR="+d.Addr, "PIDFILE="+d.PIDFile)
	cmd.Stdout, cmd.Stderr = d.Out, d.Out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait() // reap it
	d.mu.Lock()
	d.started = append(d.started, cmd)
	d.mu.Unlock()
	return WaitNewPID(t, d.PIDFile, old)
}

// PID returns the PID of the generation serving now (the one PIDFile
// names).
func (d *Deployed) PID(t testing.TB) int {
	t.Helper()
	pid, err := ReadPID(d.PIDFile)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// HandOff replaces Bin and sends SIGHUP to the generation serving now,
// which hands its socket on to a new process of the new binary (as
// App.HandOff does), and returns the old PID and, once it is written, the
// new one. The old process may still be draining: WaitGone waits for it.
func (d *Deployed) HandOff(t testing.TB) (old, next int) {
	t.Helper()
	d.Replace(t)
	old = d.PID(t)
	if err := syscall.Kill(old, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	return old, WaitNewPID(t, d.PIDFile, old)
}

// ReplaceBinary puts a new copy of built at bin (a new file renamed over
// the old one, as a deploy does): the next process started from bin runs
// the new file, the running one keeps the old.
func ReplaceBinary(t testing.TB, built, bin string) {
	t.Helper()
	b, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin+".new", b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(bin+".new", bin); err != nil {
		t.Fatal(err)
	}
}

// ReadPID returns the PID written in the file at path.
func ReadPID(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// WaitNewPID waits (20 s at most, polling every 5 ms) until the PID file
// at path names a process other than old, and returns it.
func WaitNewPID(t testing.TB, path string, old int) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if pid, err := ReadPID(path); err == nil && pid != old {
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no new process wrote %s within 20s (old pid %d)", path, old)
	return 0
}

// WaitGone waits (20 s at most) until pid has exited: gone from /proc, or
// a zombie (a handed-off generation's parent is no longer the test).
func WaitGone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d still running 20s after it was replaced", pid)
}

// GetLoad is the HTTP load of a deploy test: callers that GET one URL
// over keep-alive connections without pause until Stop. An answer other
// than 200 with the body "ok", or none, is a failure; answers are
// counted by the X-Pid header of the process that served them, and the
// first 10 failures are kept.
type GetLoad struct {
	OK, Failed atomic.Int64

	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	servedBy map[string]int
	errs     []string
}

// StartGetLoad starts callers goroutines calling GET url through hc.
func StartGetLoad(hc *http.Client, url string, callers int) *GetLoad {
	l := &GetLoad{stop: make(chan struct{}), servedBy: map[string]int{}}
	for range callers {
		l.wg.Go(func() {
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				resp, err := hc.Get(url)
				var body []byte
				if err == nil {
					body, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				if err != nil || resp.StatusCode != 200 || string(body) != "ok" {
					l.Failed.Add(1)
					status := 0
					if resp != nil {
						status = resp.StatusCode
					}
					l.Fail(fmt.Sprintf("GET: %d %q, %v", status, body, err))
					continue
				}
				l.OK.Add(1)
				l.mu.Lock()
				l.servedBy[resp.Header.Get("X-Pid")]++
				l.mu.Unlock()
			}
		})
	}
	return l
}

// Fail keeps err among the first 10 failures (the test's other load may
// report its own).
func (l *GetLoad) Fail(err string) {
	l.mu.Lock()
	if len(l.errs) < 10 {
		l.errs = append(l.errs, err)
	}
	l.mu.Unlock()
}

// Stop ends the load and waits for its callers to return.
func (l *GetLoad) Stop() {
	close(l.stop)
	l.wg.Wait()
}

// ServedBy returns how many answers each process served, by PID.
func (l *GetLoad) ServedBy() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.servedBy
}

// Errors returns the first 10 failures.
func (l *GetLoad) Errors() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.errs
}
