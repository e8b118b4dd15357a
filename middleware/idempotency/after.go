package idempotency

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/fxhq/fx"
)

// DefaultMaxPendingCompletions is Config.MaxPendingCompletions' default.
const DefaultMaxPendingCompletions = 1024

// finishing is what a request leaves to do once its handler returned: store
// its response (resp non-nil) or release its claim, fenced by token. It
// holds copies only, never memory of the pooled Ctx, so it may run after
// the Ctx was reused.
type finishing struct {
	key          string // the store key; New allocated it for this request
	token        uint64
	resp         *Response // nil: release the claim
	logger       *slog.Logger
	method, path string
}

// afterResponse runs finishings in the background for
// Config.CompleteAfterResponse, at most cap(slots) at once. A slot is
// taken by sending into slots and given back by receiving from it.
type afterResponse struct {
	slots chan struct{}
	mu    sync.Mutex
	apps  map[*fx.App]struct{} // Apps whose Shutdown drains (hooked once each)
}

func newAfterResponse(max int) *afterResponse {
	return &afterResponse{slots: make(chan struct{}, max), apps: map[*fx.App]struct{}{}}
}

// finish does f now, or in the background when Config.CompleteAfterResponse
// is set and a slot is free. With every slot taken it is done now, on the
// request's own path: the work is delayed, never dropped.
func (m *idempotency) finish(c *fx.Ctx, f finishing) {
	f.logger = c.App().Logger()
	if m.after != nil {
		select {
		case m.after.slots <- struct{}{}:
			m.inBackground(c, f)
			return
		default: // full: synchronous, as without CompleteAfterResponse
		}
	}
	f.method, f.path = c.Method(), c.Path()
	m.settle(&f)
}

// inBackground settles f on a goroutine of its own, which holds a slot.
func (m *idempotency) inBackground(c *fx.Ctx, f finishing) {
	m.after.hookShutdown(c.App())
	f.method, f.path = strings.Clone(c.Method()), strings.Clone(c.Path())
	go func() {
		defer func() { <-m.after.slots }()
		m.settle(&f)
	}()
}

// settle stores f's response or releases its claim, logging a failure.
func (m *idempotency) settle(f *finishing) {
	ctx, cancel := m.callContext()
	defer cancel()
	if f.resp == nil {
		if err := m.store.Release(ctx, f.key, f.token); err != nil {
			m.logTo(f.logger, f.method, f.path, "idempotency: claim not released; a retry waits for Config.LockTimeout", "error", err)
		}
		return
	}
	if err := m.store.Complete(ctx, f.key, f.token, *f.resp, m.lifetime); err != nil {
		m.logTo(f.logger, f.method, f.path, "idempotency: response not stored", "error", err)
	}
}

// hookShutdown makes app's Shutdown wait for the pending finishings, once
// per App. It runs inside a request, so before that App's Shutdown reads
// its OnShutdown functions (Shutdown waits for requests first).
func (a *afterResponse) hookShutdown(app *fx.App) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.apps[app]; ok {
		return
	}
	a.apps[app] = struct{}{}
	app.OnShutdown(func() error {
		a.drain()
		return nil
	})
}

// drain waits until no finishing runs in the background: it takes every
// slot (each background finishing gives its slot back within
// Config.StoreTimeout), then gives them back. Meanwhile other requests
// finish synchronously.
func (a *afterResponse) drain() {
	for range cap(a.slots) {
		a.slots <- struct{}{}
	}
	for range cap(a.slots) {
		<-a.slots
	}
}
