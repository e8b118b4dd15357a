package fx

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Hand-off: replacing the binary without a service manager. App.HandOff
// starts a new process of the same executable (os.Executable, the same
// arguments and environment), passes it the listening sockets Run and
// Listen opened (os/exec's ExtraFiles, descriptors 3, 4, ..., described by
// the FX_HANDOFF variable), and waits until the new process says it is
// serving them (it writes its PID to a pipe passed as the last
// descriptor). Only then does this process stop accepting and drain: its
// Shutdown (Run's, within RunConfig.GracePeriod) answers the requests in
// flight with Connection: close, closes idle keep-alive connections, and
// the readiness probe of package health answers 503.
//
// Nothing is dropped because the socket is never closed: both processes
// hold a descriptor of the same socket, so there is one accept queue, and
// a connection waiting in it is accepted by whichever process accepts
// next; the old process closing its descriptor leaves the socket open in
// the new one. The alternative, two sockets bound to one port with
// SO_REUSEPORT, is deliberately not used: the kernel spreads incoming
// connections over the sockets' separate queues, and closing the old
// socket resets every connection still waiting in its queue
// (TestReusePortResetsTheClosingQueue).
//
// In the new process, Run and Listen called with the
// same addr take the inherited socket instead of listening; once every
// inherited socket is served the new process reports ready. A new process
// that fails before that (a boot error, a crash) or does not report
// within RunConfig.HandOffTimeout (a minute by default) leaves the old one
// serving: HandOff returns the error and the old process carries on as if
// nothing happened; it serves as before while it waits.
//
// This is what cloudflare/tableflip does for Go services; fx implements
// it in the core (about two hundred lines) rather than depend on it:
// the root module requires only what serving HTTP needs, and the hand-off
// has to be one with Run's signals, Shutdown's drain and socket activation
// (activation.go), which a second lifecycle beside the App's would not be.
//
// Under systemd, prefer socket activation and a plain restart: the socket
// belongs to systemd and nothing is dropped either (docs/reliability.md).
// The hand-off is for hosts without a service manager that holds sockets,
// or when the new process must be up before the old one stops.
//
// Cost: nothing per connection or request; HandOff costs a process start.

// upgradeTimeout bounds how long HandOff waits for the new process to
// report ready before it ends that process and gives up, unless Run was
// given RunConfig.HandOffTimeout.
const upgradeTimeout = time.Minute

// envHandoff describes the inherited sockets: the parent's PID, then the
// key (the addr given to Run or Listen, URL-escaped) of each descriptor
// from 3 on, space-separated. The readiness pipe follows the sockets.
const envHandoff = "FX_HANDOFF"

// ErrHandOffUnsupported is returned by HandOff when the App has no
// listener it can pass on: it was not served by Run or Listen (a
// listener given to Serve is the caller's), or the listener has no
// descriptor (os.File) to share.
var ErrHandOffUnsupported = errors.New("fx: HandOff: no listener opened by Run or Listen to hand on")

// handoff is this process's side as the new process of a hand-off: the
// inherited sockets not yet taken by Run or Listen, and the pipe to report
// readiness on.
var handoff struct {
	once  sync.Once
	mu    sync.Mutex
	lns   map[string][]net.Listener
	ready *os.File
	err   error
}

// inherited returns the sockets a hand-off passed for addr, removing them
// from those still to take; nil when there are none. The first call reads
// FX_HANDOFF and removes it from the environment.
func inherited(addr string) ([]net.Listener, error) {
	handoff.once.Do(readHandoff)
	handoff.mu.Lock()
	defer handoff.mu.Unlock()
	if handoff.err != nil {
		err := handoff.err
		handoff.err = nil
		return nil, err
	}
	lns := handoff.lns[addr]
	delete(handoff.lns, addr)
	return lns, nil
}

// readHandoff reads FX_HANDOFF and turns the passed descriptors into
// listeners (inheritedListeners, listen.go, whose rules say which
// descriptors are refused); a key that does not unescape is refused
// before any descriptor is touched, as an impossible count is. A refused
// hand-off takes no readiness pipe: this process never reports ready,
// and the old one keeps serving (its HandOff fails when this process
// exits, or at its timeout).
func readHandoff() {
	v, ok := os.LookupEnv(envHandoff)
	if !ok {
		return
	}
	os.Unsetenv(envHandoff)
	fields := strings.Fields(v)
	if len(fields) == 0 || fields[0] != strconv.Itoa(os.Getppid()) {
		return // meant for another process (the variable leaked into the environment)
	}
	keys := make([]string, len(fields)-1)
	for i, k := range fields[1:] {
		key, err := url.QueryUnescape(k)
		if err != nil {
			handoff.err = fmt.Errorf("fx: hand-off: %s: key %q: %w", envHandoff, k, err)
			return
		}
		keys[i] = key
	}
	lns, err := inheritedListeners(len(keys), keys)
	if err != nil {
		handoff.err = fmt.Errorf("fx: hand-off: %w", err)
		return
	}
	handoff.lns = make(map[string][]net.Listener, len(keys))
	for i, ln := range lns {
		handoff.lns[keys[i]] = append(handoff.lns[keys[i]], ln)
	}
	handoff.ready = os.NewFile(uintptr(listenFDsStart+len(keys)), "handoff-ready")
}

// reportReady tells the old process of a hand-off that this one is
// serving, once every inherited socket has been taken; before that, after
// it, and without a hand-off it does nothing. Serve calls it, the one
// place, as it starts serving a listener: whichever of Listen, Run and
// RunListener took the sockets, the report follows them being served.
// Cost: one mutex lock per Serve.
func reportReady() {
	handoff.mu.Lock()
	defer handoff.mu.Unlock()
	if handoff.ready == nil || len(handoff.lns) > 0 {
		return
	}
	_, _ = handoff.ready.WriteString(strconv.Itoa(os.Getpid()) + "\n")
	handoff.ready.Close()
	handoff.ready = nil
}

// upgrader is an App's side as the old process of a hand-off.
type upgrader struct {
	mu      sync.Mutex
	lns     []keyedListener // what Run and Listen opened, to pass on
	started bool            // a HandOff is running or has succeeded
	done    chan struct{}   // closed when a hand-off succeeded
	watched int             // Runs watching done (they drain; else HandOff starts Shutdown)
	timeout time.Duration   // the wait for the new process's report; 0: upgradeTimeout
}

// setTimeout records RunConfig.HandOffTimeout (0 or negative: the
// default).
func (u *upgrader) setTimeout(d time.Duration) {
	u.mu.Lock()
	u.timeout = max(d, 0)
	u.mu.Unlock()
}

type keyedListener struct {
	key string
	ln  net.Listener
}

// record notes listeners Run or Listen serves for addr, to pass on.
func (u *upgrader) record(addr string, lns []net.Listener) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, ln := range lns {
		u.lns = append(u.lns, keyedListener{addr, ln})
	}
}

// handedOff returns the channel closed when a hand-off has succeeded.
func (u *upgrader) handedOff() <-chan struct{} {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.done == nil {
		u.done = make(chan struct{})
	}
	return u.done
}

// watch records whether a Run is watching handedOff (delta +1 or -1).
func (u *upgrader) watch(delta int) {
	u.mu.Lock()
	u.watched += delta
	u.mu.Unlock()
}

// HandOff replaces this process with a new one of the same executable,
// without refusing or resetting a connection (see the hand-off above): it
// starts the new process with the listening sockets Run or Listen
// opened, waits until it reports that it serves them (at most
// RunConfig.HandOffTimeout, one minute by default; then it ends the new
// process and returns an error; this process serves as before meanwhile), and
// then begins this App's shutdown: under Run, Run drains within its
// GracePeriod and returns nil; otherwise HandOff starts
// Shutdown, and Listen returns when it completes. The new process shares
// this one's standard input, output and error.
//
// HandOff returns nil once the new process is ready. It returns an error,
// and this process keeps serving as before, when the new process could
// not be started, exited or closed the pipe before reporting ready (its
// boot failed), or did not report in time (it is then killed);
// ErrHandOffUnsupported when no listener was opened by Run or Listen; and
// an error when a HandOff is already running or has succeeded, or the
// shutdown has begun. Run calls it on RunConfig.HandOffSignal. Unix only:
// elsewhere the new process cannot inherit the sockets, and HandOff
// returns the error of starting it.
func (a *App) HandOff() error {
	u := &a.up
	u.mu.Lock()
	if u.started || a.life.stop.begun() {
		u.mu.Unlock()
		return errors.New("fx: HandOff: an upgrade is running or done, or the App is shutting down")
	}
	lns := u.lns
	if len(lns) == 0 {
		u.mu.Unlock()
		return ErrHandOffUnsupported
	}
	u.started = true
	timeout := u.timeout
	u.mu.Unlock()
	if timeout == 0 {
		timeout = upgradeTimeout
	}

	pid, err := a.startSuccessor(lns, timeout)
	u.mu.Lock()
	if err != nil {
		u.started = false
		u.mu.Unlock()
		return err
	}
	if u.done == nil {
		u.done = make(chan struct{})
	}
	close(u.done)
	watched := u.watched > 0
	u.mu.Unlock()
	a.logger.Info("fx: handed the listeners on; draining", "new_pid", pid)
	if !watched {
		go a.Shutdown()
	}
	return nil
}

// startSuccessor starts the new process with lns and waits, at most
// timeout, for its readiness report; it returns the new process's PID.
func (a *App) startSuccessor(lns []keyedListener, timeout time.Duration) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("fx: HandOff: %w", err)
	}
	desc := []string{strconv.Itoa(os.Getpid())}
	socks := make([]syscall.Conn, 0, len(lns))
	for _, k := range lns {
		sc, ok := k.ln.(syscall.Conn)
		if !ok {
			return 0, ErrHandOffUnsupported
		}
		if ul, ok := k.ln.(*net.UnixListener); ok {
			ul.SetUnlinkOnClose(false) // the new process serves the same path
		}
		socks = append(socks, sc)
		desc = append(desc, url.QueryEscape(k.key))
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("fx: HandOff: %w", err)
	}
	defer r.Close()

	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envHandoff+"=") && !strings.HasPrefix(kv, "LISTEN_") {
			env = append(env, kv)
		}
	}
	env = append(env, envHandoff+"="+strings.Join(desc, " "))
	proc, err := spawn(exe, env, socks, w)
	w.Close() // only the new process holds the write end: its exit ends the read below
	if err != nil {
		return 0, fmt.Errorf("fx: HandOff: starting %s: %w", exe, err)
	}

	report := make(chan string, 1)
	go func() {
		// One line; not until EOF: a process the new one starts before it
		// reports may hold the write end too.
		line, _ := bufio.NewReader(io.LimitReader(r, 32)).ReadString('\n')
		report <- strings.TrimSpace(line)
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case s := <-report:
		if pid, err := strconv.Atoi(s); err == nil && pid == proc.Pid {
			go proc.Wait() // reaped if it ends before this process does
			return pid, nil
		}
		st, err := proc.Wait()
		if err == nil {
			err = errors.New(st.String())
		}
		return 0, fmt.Errorf("fx: HandOff: the new process (pid %d) ended before it was ready: %v", proc.Pid, err)
	case <-t.C:
		proc.Kill()
		proc.Wait()
		return 0, fmt.Errorf("fx: HandOff: the new process (pid %d) was not ready within %v; killed", proc.Pid, timeout)
	}
}
