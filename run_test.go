package fx_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
)

// slowBody is what the child's /slow route answers: large enough to take
// several socket writes, so a cut-off response shows.
var slowBody = strings.Repeat("fx-drain-", 64<<10/9) + "END"

// TestRunHelperProcess is not a test: it is the program the signal tests
// run as a child process (the test binary re-executed with
// FX_RUN_HELPER=<mode>). It calls Run on 127.0.0.1:0, prints its address,
// and prints what happens on stdout, one line per event; its exit status
// says how Run returned: 0 nil, 3 an error wrapping context.Canceled (a
// second signal), 4 any other error.
func TestRunHelperProcess(t *testing.T) {
	mode := os.Getenv("FX_RUN_HELPER")
	if mode == "" {
		t.Skip("helper process for the Run signal tests")
	}
	// Each line is one Write to os.Stdout, as each of the logger's records is.
	say := func(format string, args ...any) { fmt.Printf(format+"\n", args...) }
	if mode == "never-ready" && os.Getenv("FX_HANDOFF") != "" {
		say("new process: never reporting ready")
		// The new process of a hand-off that never serves: the old one
		// kills it, and it ends when the test closes the standard input
		// it shares with the old one (the test must not wait for it).
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	app := fx.New(fx.Config{Logger: slog.New(slog.NewTextHandler(os.Stdout, nil))})
	app.OnShutdown(func() error { say("onshutdown: ran"); return nil })
	app.Get("/slow", func(c *fx.Ctx) error {
		say("slow: entered")
		<-c.Context().Done() // the shutdown has begun
		if mode == "stuck" {
			select {} // never answers: only the second signal ends the drain
		}
		// Answer a little later: a process that exited when the shutdown
		// began would be gone by then.
		time.Sleep(300 * time.Millisecond)
		say("slow: answering")
		return c.String(200, slowBody)
	})
	uploadRoute(app)
	grace := 10 * time.Second
	switch mode {
	case "stuck":
		grace = time.Hour
	case "upload":
		grace = uploadGrace
	}
	rc := fx.RunConfig{
		GracePeriod: grace,
		OnListen:    func(addr net.Addr) { say("listening: %s", addr) },
	}
	if mode == "never-ready" {
		rc.HandOffSignal, rc.HandOffTimeout = syscall.SIGHUP, neverReadyTimeout
	}
	err := app.Run(context.Background(), "127.0.0.1:0", rc)
	say("run: returned %v", err)
	switch {
	case err == nil:
		os.Exit(0)
	case errors.Is(err, context.Canceled):
		os.Exit(3)
	}
	os.Exit(4)
}

// runHelper starts TestRunHelperProcess in mode as a child process; the
// tests that use it send SIGTERM, so they skip on Windows.
func runHelper(t *testing.T, mode string) *child {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("sends SIGTERM")
	}
	return startChild(t, "TestRunHelperProcess", "FX_RUN_HELPER="+mode)
}

// A real SIGTERM to a process serving with Run: the request in flight
// gets its complete response, OnShutdown runs, then Run returns nil and
// the process exits 0. (Before Run, the examples' `Listen` beside a
// signal handler exited as soon as the shutdown began.)
func TestRunSignalDrainsThenExits(t *testing.T) {
	t.Parallel()
	c := runHelper(t, "drain")
	addr := strings.TrimPrefix(c.waitLine("listening: "), "listening: ")
	got := getAsync("http://"+addr+"/slow", 15*time.Second)
	c.waitLine("slow: entered")
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if b != slowBody {
			t.Errorf("in-flight response: got %d bytes (%.60q), want the complete %d", len(b), b, len(slowBody))
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no response within 15 s")
	}
	if code := c.wait(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	answered, closed, returned := c.index("slow: answering"), c.index("onshutdown: ran"), c.index("run: returned <nil>")
	if answered < 0 || closed < 0 || returned < 0 || !(answered < closed && closed < returned) {
		t.Errorf("want the response, then OnShutdown, then Run returning nil; got lines %d, %d, %d", answered, closed, returned)
	}
}

// uploadGrace is the grace period of the child serving the uploads of
// TestRunSignalAnswersUploadsInFlight.
const uploadGrace = 3 * time.Second

// requireSlow skips t unless FX_SLOW_TESTS is set: it runs processes or
// waits in real time for seconds.
func requireSlow(t *testing.T) {
	t.Helper()
	if os.Getenv("FX_SLOW_TESTS") == "" {
		t.Skip("slow test: FX_SLOW_TESTS=1 runs it (.ci/run sets it)")
	}
}

// A real SIGTERM during two uploads of 2 MiB arriving in 20 chunks 100 ms
// apart, sent after the fifth chunk: the whole one is read to the end and
// answered 200 with Connection: close; the one whose body stops 12 bytes
// short of its Content-Length (2 MiB sent as 20 chunks of 2 MiB/20) is
// answered 408 with Connection: close before the grace period ends; Run
// returns nil. Before, the short one got no byte back, its connection was
// held for the whole grace period, and Run returned "grace period ...
// ended with requests still running".
func TestRunSignalAnswersUploadsInFlight(t *testing.T) {
	requireSlow(t)
	t.Parallel()
	c := runHelper(t, "upload")
	addr := strings.TrimPrefix(c.waitLine("listening: "), "listening: ")
	signalled := make(chan time.Time, 1)
	term := func() {
		signalled <- time.Now()
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
	}
	uploadsThroughShutdown(t, addr, term, signalled, uploadGrace, "")
	if code := c.wait(); code != 0 {
		t.Errorf("exit status %d, want 0 (Run returned nil)", code)
	}
	if c.index("run: returned <nil>") < 0 {
		t.Error("Run did not return nil")
	}
}

// uploadsThroughShutdown runs the two uploads of the shutdown tests
// against addr: a whole one of 2 MiB in 20 chunks 100 ms apart, calling
// signal after its fifth chunk (signal sends the time the shutdown began
// on began), and one 12 bytes short of its Content-Length. It requires the
// whole one answered 200 with Connection: close, and the short one 408
// with Connection: close before grace has passed since the signal; pid,
// when not empty, is the X-Pid both answers must carry.
func uploadsThroughShutdown(t *testing.T, addr string, signal func(), began <-chan time.Time, grace time.Duration, pid string) {
	t.Helper()
	const size, chunks, gap = 2 << 20, 20, 100 * time.Millisecond
	type upload struct {
		r   result
		at  time.Time
		err error
	}
	whole, short := make(chan upload, 1), make(chan upload, 1)
	wholeConn := dialBounded(t, addr, 30*time.Second)
	shortConn := dialBounded(t, addr, 30*time.Second)
	go func() {
		r, at, err := slowUpload(shortConn, size, size/chunks*chunks, chunks, gap, -1, nil)
		short <- upload{r, at, err}
	}()
	go func() {
		r, at, err := slowUpload(wholeConn, size, size, chunks, gap, 4, signal)
		whole <- upload{r, at, err}
	}()
	w, s := <-whole, <-short
	if w.err != nil || w.r.status != 200 || string(w.r.body) != fmt.Sprintf("got %d", size) || !w.r.close {
		t.Errorf("the whole upload: %d %q close=%v, %v; want 200 \"got %d\" with Connection: close", w.r.status, w.r.body, w.r.close, w.err, size)
	}
	if s.err != nil {
		t.Fatalf("the upload 12 bytes short got no answer: %v", s.err)
	}
	wireEnvelope(t, s.r, 408, "FX_REQUEST_TIMEOUT")
	if since := s.at.Sub(<-began); !s.r.close || since >= grace {
		t.Errorf("the short upload's 408: Connection: close = %v, %v after the signal; want true, within the grace period (%v)", s.r.close, since, grace)
	}
	if pid != "" && (w.r.header.Get("X-Pid") != pid || s.r.header.Get("X-Pid") != "") {
		t.Errorf("answered by pid %q and %q; want the old process, %s", w.r.header.Get("X-Pid"), s.r.header.Get("X-Pid"), pid)
	}
}

// neverReadyTimeout is the HandOffTimeout of TestRunHandOffTimeout's child.
const neverReadyTimeout = 400 * time.Millisecond

// TestRunHandOffTimeout: RunConfig.HandOffTimeout bounds the wait for a
// new process that never reports ready (it was a fixed minute): after
// 400 ms the new process is killed, the failure is logged with the bound,
// and the old process, which served as before meanwhile, keeps serving;
// SIGTERM then shuts it down cleanly.
func TestRunHandOffTimeout(t *testing.T) {
	requireSlow(t)
	t.Parallel()
	c := runHelper(t, "never-ready")
	addr := strings.TrimPrefix(c.waitLine("listening: "), "listening: ")
	began := time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	c.waitLine("new process: never reporting ready")
	// Meanwhile the old process serves.
	upload := func(what string) {
		conn := dialBounded(t, addr, 10*time.Second)
		r, _, err := slowUpload(conn, 3, 3, 1, 0, -1, nil)
		if err != nil || r.status != 200 || string(r.body) != "got 3" {
			t.Fatalf("%s: %d %q, %v; want 200 \"got 3\"", what, r.status, r.body, err)
		}
	}
	upload("while the new process is awaited")
	line := c.waitLine("upgrade failed")
	if took := time.Since(began); !strings.Contains(line, "not ready within 400ms") || took > 20*time.Second {
		t.Errorf("after %v: %q; want the failure at the 400ms bound", took, line)
	}
	upload("after the failed hand-off")
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := c.wait(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
}

// A second SIGTERM during the drain ends it at once: Run stops waiting for
// a request that never ends (the grace period is an hour), still runs
// OnShutdown, and returns an error wrapping context.Canceled.
func TestRunSecondSignalEndsDrain(t *testing.T) {
	t.Parallel()
	c := runHelper(t, "stuck")
	addr := strings.TrimPrefix(c.waitLine("listening: "), "listening: ")
	go func() {
		client := &http.Client{Timeout: 15 * time.Second}
		if resp, err := client.Get("http://" + addr + "/slow"); err == nil {
			resp.Body.Close()
		}
	}()
	c.waitLine("slow: entered")
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	c.waitLine("fx: shutting down")
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := c.wait(); code != 3 {
		t.Errorf("exit status %d, want 3 (Run returned context.Canceled)", code)
	}
	if c.index("onshutdown: ran") < 0 {
		t.Error("OnShutdown did not run after the second signal")
	}
	if c.index("second signal") < 0 {
		t.Error("Run did not log the forced end of the drain")
	}
}

// serveRun runs app.Run on 127.0.0.1:0 with cfg in the background and
// returns the address and Run's result channel.
func serveRun(t *testing.T, app *fx.App, ctx context.Context, cfg fx.RunConfig) (string, chan error) {
	t.Helper()
	addrc := make(chan string, 1)
	cfg.OnListen = func(a net.Addr) { addrc <- a.String() }
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, "127.0.0.1:0", cfg) }()
	select {
	case addr := <-addrc:
		return addr, done
	case err := <-done:
		t.Fatalf("Run returned %v before listening", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not listen within 10 s")
	}
	return "", nil
}

// Cancelling Run's ctx starts the same drain as a signal: Run returns nil
// only after the in-flight response and OnShutdown.
func TestRunContextDrains(t *testing.T) {
	t.Parallel()
	app := quiet()
	var ev events
	entered := make(chan struct{})
	app.OnShutdown(func() error { ev.add("onshutdown"); return nil })
	app.Get("/slow", func(c *fx.Ctx) error {
		close(entered)
		<-c.Context().Done()
		ev.add("handler")
		return c.String(200, slowBody)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, done := serveRun(t, app, ctx, fx.RunConfig{})
	got := getAsync("http://"+addr+"/slow", 0)
	<-entered
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return")
	}
	ev.add("run")
	if s := ev.String(); s != "handler,onshutdown,run" {
		t.Errorf("order %q, want handler,onshutdown,run", s)
	}
	if b := <-got; b != slowBody {
		t.Errorf("in-flight response: %d bytes, want %d", len(b), len(slowBody))
	}
}

// The grace period bounds the drain: a request that never finishes holds
// Run for GracePeriod, after which OnShutdown runs and Run returns an
// error wrapping context.DeadlineExceeded that names the grace period.
func TestRunGracePeriodBoundsStuckRequest(t *testing.T) {
	t.Parallel()
	app := quiet()
	ranShutdown := onShutdownRan(app, nil)
	entered := stuckRoute(t, app) // the request outlives Run
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, done := serveRun(t, app, ctx, fx.RunConfig{GracePeriod: 200 * time.Millisecond})
	getAsync("http://"+addr+"/stuck", 15*time.Second)
	<-entered
	cancel()
	err := kittest.Within(t, done, "Run still waiting 10 s after a 200 ms grace period")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "grace period of 200ms") {
		t.Errorf("Run = %v, want the grace period's DeadlineExceeded", err)
	}
	if !ranShutdown() {
		t.Error("OnShutdown did not run")
	}
}

// When serving fails on its own, Run shuts the App down (OnShutdown runs)
// and returns the listener's error instead of waiting for a signal.
func TestRunListenerErrorShutsDown(t *testing.T) {
	app, ranShutdown, broken := brokenListener(t)
	done := make(chan error, 1)
	go func() {
		done <- app.RunListener(context.Background(), broken, fx.RunConfig{OnListen: func(net.Addr) {}})
	}()
	err := kittest.Within(t, done, "RunListener blocked after its listener failed")
	if !errors.Is(err, broken.err) {
		t.Errorf("RunListener = %v, want %v", err, broken.err)
	}
	if !ranShutdown() {
		t.Error("OnShutdown did not run")
	}
}

// A PID file that cannot be written makes Run refuse to start: it returns
// the error at once, having served nothing, and the listener is closed.
// Before, the failure was logged and Run served on, so that a supervisor
// following the PID file followed nothing.
func TestRunRefusesAnUnwritablePIDFile(t *testing.T) {
	app := quiet()
	ranShutdown := onShutdownRan(app, nil)
	ln := listenLoopback(t)
	pidFile := filepath.Join(t.TempDir(), "missing", "app.pid")
	done := make(chan error, 1)
	go func() {
		done <- app.RunListener(context.Background(), ln, fx.RunConfig{PIDFile: pidFile, OnListen: func(net.Addr) {}})
	}()
	err := kittest.Within(t, done, "Run still serving with a PID file it could not write")
	if err == nil || !strings.Contains(err.Error(), "PID file") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Run = %v, want the PID file's error", err)
	}
	if accepts(ln.Addr().String()) {
		t.Error("the listener still accepts after Run refused to start")
	}
	if ranShutdown() {
		t.Error("OnShutdown ran for an App that never served")
	}
}

// A boot error is returned at once: nothing is listened on or served.
func TestRunBootError(t *testing.T) {
	app := quiet()
	app.Route(fx.Route{Method: "GET", Path: "/x"}) // no handler
	listened := false
	err := app.Run(context.Background(), "127.0.0.1:0", fx.RunConfig{OnListen: func(net.Addr) { listened = true }})
	var fe *fx.Error
	if !errors.As(err, &fe) || fe.Code != fx.ErrorCodes.RouteHandlerRequired {
		t.Errorf("Run = %v, want the FX_ROUTE_HANDLER_REQUIRED boot error", err)
	}
	if listened {
		t.Error("Run listened although Boot failed")
	}
}

// Run serves until SIGINT/SIGTERM, drains the requests in flight (at most
// GracePeriod), runs the OnShutdown functions and only then returns.
func ExampleApp_Run() {
	app := fx.New()
	app.Get("/hello", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"message": "Hello, fx!"})
	})
	app.OnShutdown(func() error { return nil }) // close pools here
	if err := app.Run(context.Background(), ":8080", fx.RunConfig{GracePeriod: 20 * time.Second}); err != nil {
		log.Fatal(err)
	}
}

// TestIdleRunExitsAtOnce: an idle App (it served a request on a
// connection its client has closed; none is open) returns from Run within
// a bound once its context ends: no poll interval or drain of seconds
// stands between the signal and the exit (~25 ms measured; the bound is
// docs/reliability.md's, with room for a loaded machine).
func TestIdleRunExitsAtOnce(t *testing.T) {
	app := quiet()
	app.Get("/", func(c *fx.Ctx) error { return c.String(200, "ok") })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, "127.0.0.1:0", fx.RunConfig{OnListen: func(a net.Addr) { addr <- a.String() }})
	}()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Get("http://" + <-addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	time.Sleep(50 * time.Millisecond) // the server sees the close
	const bound = 500 * time.Millisecond
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if el := time.Since(start); el > bound || err != nil {
			t.Errorf("an idle App's Run returned %v after %v; want nil within %v", err, el, bound)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return 10 s after its context ended")
	}
}
