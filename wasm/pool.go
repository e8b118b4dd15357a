package wasm

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// pool hands out instances exclusively. A token in sem is held by every
// instance in use, so at most cap(sem) run at once; an idle instance is only
// created when none is idle, so live instances never exceed cap(sem) either.
type pool struct {
	sem     chan struct{}
	closing chan struct{} // closed by close: wakes waiters
	maxIdle int
	wait    time.Duration

	// ctx is the parent of every call into the guest; close cancels it, so
	// running calls stop (a computing guest at its next check, a sleeping
	// one at once: sleep.go) before Module.Close closes the runtime.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	idle   []*instance // LIFO: the warmest instance first
	live   int
	closed bool

	created, discarded, recycled, calls, failures, rejected atomic.Uint64
}

func newPool(maxLive, maxIdle int, wait time.Duration) *pool {
	ctx, cancel := context.WithCancel(context.Background())
	return &pool{
		sem:     make(chan struct{}, maxLive),
		closing: make(chan struct{}),
		maxIdle: maxIdle,
		wait:    wait,
		ctx:     ctx,
		cancel:  cancel,
	}
}

// take gets a token, waiting at most p.wait. It reports false when the pool
// is exhausted or closed.
func (p *pool) take() bool {
	select {
	case p.sem <- struct{}{}:
		return true
	default:
	}
	if p.wait <= 0 {
		return false
	}
	t := time.NewTimer(p.wait)
	defer t.Stop()
	select {
	case p.sem <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-p.closing:
		return false
	}
}

// acquire returns an instance for exclusive use, or errUnavailable when
// none frees up in time, or the error of instantiating a new one.
func (m *Module) acquire(ctx context.Context) (*instance, error) {
	p := m.pool
	if !p.take() {
		p.rejected.Add(1)
		return nil, errUnavailable
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.sem
		p.rejected.Add(1)
		return nil, errUnavailable
	}
	if n := len(p.idle); n > 0 {
		inst := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return inst, nil
	}
	p.live++
	p.mu.Unlock()
	inst, err := m.newInstance(ctx)
	if err != nil {
		p.mu.Lock()
		p.live--
		p.mu.Unlock()
		<-p.sem
		return nil, err
	}
	p.created.Add(1)
	return inst, nil
}

// release returns an instance after use. keep=false (a failure, or a
// recycle) closes it; so does a full idle list or a closed pool.
func (p *pool) release(inst *instance, keep bool) {
	p.mu.Lock()
	if keep && !p.closed && len(p.idle) < p.maxIdle {
		p.idle = append(p.idle, inst)
		p.mu.Unlock()
		<-p.sem
		return
	}
	p.live--
	p.mu.Unlock()
	inst.close()
	<-p.sem
}

// put adds a fresh instance (prewarm) without a token.
func (p *pool) put(inst *instance) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) >= p.maxIdle || p.live >= cap(p.sem) {
		inst.close()
		return
	}
	p.idle = append(p.idle, inst)
	p.live++
	p.created.Add(1)
}

// close closes the idle instances, cancels the calls in progress and turns
// every later acquire away. Instances in use are closed when released.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.live -= len(idle)
	p.mu.Unlock()
	close(p.closing)
	p.cancel()
	for _, inst := range idle {
		inst.close()
	}
}

// drain returns once every instance in use has been released (it takes
// every token), or after limit. close must have run, so the calls in
// progress are cancelled and end promptly; limit only guards against a
// token that was never returned. Module.Close drains before closing the
// runtime, which releases each module's system resources (wazero sets its
// Sys to nil) even while a WASI function of a running call reads them: a
// data race the race detector reported for a guest in poll_oneoff.
func (p *pool) drain(limit time.Duration) {
	t := time.NewTimer(limit)
	defer t.Stop()
	for range cap(p.sem) {
		select {
		case p.sem <- struct{}{}:
		case <-t.C:
			return
		}
	}
}
