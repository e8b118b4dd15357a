package fx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultGracePeriod is how long Run lets requests in flight finish after
// the signal (RunConfig.GracePeriod).
const DefaultGracePeriod = 10 * time.Second

// RunConfig configures Run and RunListener. The zero value is the
// defaults.
type RunConfig struct {
	// GracePeriod bounds the drain: how long Run waits, once shutdown
	// has begun, for requests in flight to finish before it gives up on
	// them, runs the OnShutdown functions and returns. Default 10s
	// (DefaultGracePeriod); negative: no bound (a request that never ends
	// holds Run forever, and only a second signal ends the wait).
	GracePeriod time.Duration

	// OnListen is called with the listener's address once the App has
	// booted and the address is bound, before the first connection is
	// served (connections that arrive meanwhile wait in the listen
	// queue). Nil: Run logs "fx: listening" with the address at info level
	// to the App's logger.
	OnListen func(addr net.Addr)

	// HandOffSignal, when set (syscall.SIGHUP is the custom), makes Run
	// call HandOff when the signal arrives: a new process of the same
	// executable takes the listening sockets over, and once it reports
	// ready this one drains within GracePeriod and Run returns nil. An
	// HandOff that fails is logged and this process keeps serving. Nil:
	// the signal keeps its default action (SIGHUP ends the process).
	HandOffSignal os.Signal

	// HandOffTimeout bounds how long a hand-off (HandOff, from
	// HandOffSignal or called while Run runs) waits for the new process to
	// report ready; then the new process is killed, the HandOff fails
	// (logged) and this process carries on. Meanwhile this process serves
	// exactly as before: it accepts and answers on the shared sockets, its
	// readiness probe answers ready, a second HandOffSignal is refused (a
	// hand-off is running) and SIGINT/SIGTERM shut it down as usual.
	// Default (0 or negative): one minute.
	HandOffTimeout time.Duration

	// PIDFile, when set, is the path Run writes the process ID to (with a
	// newline, replaced atomically) once it listens, before it serves, and
	// removes when it returns unless another process has written its own
	// by then (the new process of a hand-off). A service manager that
	// follows the main process through a PID file (systemd's PIDFile=)
	// then follows the hand-off. When the file cannot be written, Run
	// refuses to start, as most daemons do: it returns the error having
	// served nothing (the new process of a hand-off then fails before it
	// reports ready, and the old one keeps serving), since a supervisor
	// following a stale file would follow nothing.
	PIDFile string
}

// Run boots the App, listens on addr (":8080", "127.0.0.1:0") and serves
// until SIGINT or SIGTERM arrives or ctx is done; then it shuts the App
// down gracefully and returns once the shutdown has completed: new
// connections refused, requests in flight answered (for at most
// RunConfig.GracePeriod, default 10s), the OnShutdown functions run. A
// main may exit as soon as Run returns:
//
//	if err := app.Run(context.Background(), ":8080"); err != nil {
//		log.Fatal(err)
//	}
//
// A second SIGINT/SIGTERM during the drain ends it at once: Run stops
// waiting for requests, runs the OnShutdown functions and returns. From
// then on the signals have their default action again, so a third one
// ends the process even if an OnShutdown function hangs. While Run runs
// it takes over SIGINT and SIGTERM for the whole process (os/signal);
// for other signals or custom handling, call Serve and Shutdown yourself.
// ctx only starts the shutdown: its end does not shorten the drain.
//
// Run returns
//   - nil after a clean shutdown (signal or ctx), whatever the handlers
//     returned;
//   - the boot error, net.Listen's error, or the error of writing
//     RunConfig.PIDFile, at once, having served nothing;
//   - an error wrapping context.DeadlineExceeded when requests were still
//     running at the end of the grace period, and one wrapping
//     context.Canceled when a second signal ended the drain (their
//     connections are closed when the process exits);
//   - the error of serving itself (the listener failed) when serving ended
//     without a signal: the App is then shut down as after a signal;
//   - joined with any OnShutdown function's error.
//
// Run listens where Listen does: on the sockets a hand-off passed for
// addr, else on those of socket activation (LISTEN_FDS; all of them,
// whatever addr says), else on a new one. With RunConfig.HandOffSignal,
// or when HandOff is called, it hands them on to a new process of the
// same executable and drains (see HandOff).
func (a *App) Run(ctx context.Context, addr string, cfg ...RunConfig) error {
	if err := a.Boot(); err != nil {
		return err
	}
	lns, err := a.listen(addr)
	if err != nil {
		return err
	}
	return a.runListeners(ctx, lns, cfg...)
}

// RunListener is Run on a listener of your own (TLS, a socket you
// opened). ln is closed when RunListener returns. HandOff cannot hand ln
// on: it is not one Run or Listen opened.
func (a *App) RunListener(ctx context.Context, ln net.Listener, cfg ...RunConfig) error {
	return a.runListeners(ctx, []net.Listener{ln}, cfg...)
}

func (a *App) runListeners(ctx context.Context, lns []net.Listener, cfg ...RunConfig) error {
	var rc RunConfig
	if len(cfg) > 0 {
		rc = cfg[0]
	}
	if rc.GracePeriod == 0 {
		rc.GracePeriod = DefaultGracePeriod
	}
	if err := a.Boot(); err != nil {
		for _, ln := range lns {
			ln.Close()
		}
		return err
	}
	// Subscribe before serving: a signal that arrives once connections are
	// accepted must start the drain, not kill the process. Two slots: a
	// quick double Ctrl-C must not lose the second.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var upgradeSigs chan os.Signal // nil without HandOffSignal: never ready
	if rc.HandOffSignal != nil {
		upgradeSigs = make(chan os.Signal, 1)
		signal.Notify(upgradeSigs, rc.HandOffSignal)
		defer signal.Stop(upgradeSigs)
	}
	a.up.setTimeout(rc.HandOffTimeout)
	a.up.watch(1)
	watching := true
	defer func() {
		if watching {
			a.up.watch(-1)
		}
	}()
	handedOff := a.up.handedOff()

	if rc.PIDFile != "" {
		if err := writePIDFile(rc.PIDFile); err != nil {
			for _, ln := range lns {
				ln.Close()
			}
			return fmt.Errorf("fx: writing the PID file: %w", err)
		}
		defer removePIDFile(rc.PIDFile)
	}
	for _, ln := range lns {
		if rc.OnListen != nil {
			rc.OnListen(ln.Addr())
		} else {
			a.logger.Info("fx: listening", "addr", ln.Addr().String())
		}
	}
	served := make(chan error, len(lns))
	for _, ln := range lns {
		go func() { served <- a.Serve(ln) }()
	}

	var serveErr error
wait:
	for {
		select {
		case s := <-sigs:
			a.logger.Info("fx: shutting down", "signal", s.String(), "grace", rc.GracePeriod)
		case <-ctx.Done():
			a.logger.Info("fx: shutting down", "reason", context.Cause(ctx).Error(), "grace", rc.GracePeriod)
		case serveErr = <-served:
			// Serving ended on its own (or someone called Shutdown, and then
			// the shutdown below just returns its result).
			if serveErr != nil {
				a.logger.Error("fx: serving failed; shutting down", "err", serveErr, "grace", rc.GracePeriod)
			}
		case s := <-upgradeSigs:
			a.logger.Info("fx: upgrading: starting a new process", "signal", s.String())
			go func() {
				if err := a.HandOff(); err != nil {
					a.logger.Error("fx: upgrade failed; still serving", "err", err)
				}
			}()
			continue wait
		case <-handedOff:
			a.logger.Info("fx: shutting down after the hand-off", "grace", rc.GracePeriod)
		}
		break
	}
	a.up.watch(-1)
	watching = false

	drain, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	if rc.GracePeriod > 0 {
		var cancelTimeout context.CancelFunc
		drain, cancelTimeout = context.WithTimeoutCause(drain, rc.GracePeriod,
			fmt.Errorf("fx: grace period of %v ended with requests still running: %w", rc.GracePeriod, context.DeadlineExceeded))
		defer cancelTimeout()
	}
	drained := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			// Restore the default action first: a third signal ends the
			// process even if an OnShutdown function hangs.
			signal.Stop(sigs)
			a.logger.Warn("fx: second signal; ending the drain now", "signal", s.String())
			cancel(fmt.Errorf("fx: shutdown forced by a second signal (%v): %w", s, context.Canceled))
		case <-drained:
		}
	}()
	err := a.ShutdownWithContext(drain)
	close(drained)
	return errors.Join(serveErr, err)
}

// writePIDFile writes the process ID to path, replacing it atomically (a
// reader never sees a half-written file).
func writePIDFile(path string) error {
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// removePIDFile removes path if it still holds this process's ID.
func removePIDFile(path string) {
	b, err := os.ReadFile(path)
	if err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(os.Getpid()) {
		os.Remove(path)
	}
}
