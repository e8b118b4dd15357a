package wasm

import (
	"context"
	"errors"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"github.com/fxhq/fx"
)

// sleeper bounds the guest's sleeps by the running call.
//
// Why: a guest sleeps through WASI poll_oneoff with a clock subscription
// (Go's time.Sleep does, once no goroutine is runnable), and wazero serves
// that by calling the module's Nanosleep, which has no context. wazero's
// WithCloseOnContextDone only stops a guest between its own instructions,
// never inside a host call, so with the stock time.Sleep a guest calling
// time.Sleep(30*time.Second) held its request and its instance for 30 s
// past Config.Timeout, and held Module.Close and App.Shutdown as long.
//
// Each instance therefore gets its own Nanosleep (instance.nanosleep),
// which reads the call it is running from here: the call's context (its
// deadline is Config.Timeout, or the instantiation bound; Module.Close
// cancels it) and the request's fx.Ctx (its Context ends at App.Shutdown).
// The fields are plain: wazero runs host functions on the goroutine that
// called into the guest, the same one that sets and clears them.
type sleeper struct {
	ctx     context.Context // the running call's; nil between calls
	fxc     *fx.Ctx         // the request being served; nil while instantiating
	appDone <-chan struct{} // fxc.Context().Done(), taken at the first sleep
}

// begin arms the sleeper for one call into the guest.
func (s *sleeper) begin(ctx context.Context, c *fx.Ctx) { s.ctx, s.fxc, s.appDone = ctx, c, nil }

// end disarms it, so an idle instance keeps no request alive.
func (s *sleeper) end() { s.ctx, s.fxc, s.appDone = nil, nil, nil }

// nanosleep is the instance's sys.Nanosleep. It sleeps ns, but no longer
// than the running call may last. When the call's deadline passes, the
// call is cancelled, the request's Context ends (App.Shutdown) or the
// Module is closed, it does not return to the guest: it panics with the
// matching *sys.ExitError, which wazero recovers at the call boundary and
// returns from the call, as WASI proc_exit does. So the guest never runs
// past its deadline (a guest that "woke early" cannot answer 200 after
// the timeout), and the call fails as a timeout (502, instance
// discarded) as soon as the deadline passes.
//
// Cost: one timer per sleep of a positive duration; one context.WithCancel
// for the request (fx.Ctx.Context) the first time a call sleeps.
func (inst *instance) nanosleep(ns int64) {
	s := &inst.sleep
	if s.ctx == nil { // no call is running: wazero calls it only from one
		panic(sys.NewExitError(sys.ExitCodeContextCanceled))
	}
	if s.fxc != nil && s.appDone == nil {
		s.appDone = s.fxc.Context().Done()
	}
	if ns > 0 && s.stopCode() == 0 {
		t := time.NewTimer(time.Duration(ns))
		select {
		case <-t.C:
		case <-s.ctx.Done():
		case <-s.appDone:
		}
		t.Stop()
	}
	if code := s.stopCode(); code != 0 {
		panic(sys.NewExitError(code))
	}
}

// stopCode returns the exit code that ends the running call now, or 0 when
// it may go on: sys.ExitCodeDeadlineExceeded past its deadline (reported as
// "timed out"), sys.ExitCodeContextCanceled once it is cancelled (the
// Module is closed) or the App shuts down.
func (s *sleeper) stopCode() uint32 {
	if err := s.ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return sys.ExitCodeDeadlineExceeded
		}
		return sys.ExitCodeContextCanceled
	}
	select {
	case <-s.appDone:
		return sys.ExitCodeContextCanceled
	default:
		return 0
	}
}
