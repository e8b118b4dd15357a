package fx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
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
//   - the boot error, or net.Listen's error, at once, having served
//     nothing;
//   - an error wrapping context.DeadlineExceeded when requests were still
//     running at the end of the grace period, and one wrapping
//     context.Canceled when a second signal ended the drain (their
//     connections are closed when the process exits);
//   - the error of serving itself (the listener failed) when serving ended
//     without a signal: the App is then shut down as after a signal;
//   - joined with any OnShutdown function's error.
func (a *App) Run(ctx context.Context, addr string, cfg ...RunConfig) error {
	if err := a.Boot(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return a.RunListener(ctx, ln, cfg...)
}

// RunListener is Run on a listener of your own (TLS, socket activation).
// ln is closed when RunListener returns.
func (a *App) RunListener(ctx context.Context, ln net.Listener, cfg ...RunConfig) error {
	var rc RunConfig
	if len(cfg) > 0 {
		rc = cfg[0]
	}
	if rc.GracePeriod == 0 {
		rc.GracePeriod = DefaultGracePeriod
	}
	if err := a.Boot(); err != nil {
		ln.Close()
		return err
	}
	// Subscribe before serving: a signal that arrives once connections are
	// accepted must start the drain, not kill the process. Two slots: a
	// quick double Ctrl-C must not lose the second.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	if rc.OnListen != nil {
		rc.OnListen(ln.Addr())
	} else {
		a.logger.Info("fx: listening", "addr", ln.Addr().String())
	}
	served := make(chan error, 1)
	go func() { served <- a.Serve(ln) }()

	var serveErr error
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
	}

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
