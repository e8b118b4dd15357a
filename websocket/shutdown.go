package websocket

import (
	"fmt"
	"sync"
	"time"

	"github.com/fxhq/fx"
)

// Shutdown. fasthttp forgets a connection once it is hijacked, so the
// App's Shutdown does not wait for WebSocket connections by itself. Each
// route (New) keeps the open connections of every App it serves in a
// registry of its own (server.registries: one per App, usually one in
// all), made with the route's first connection on that App. Making it
// starts one goroutine, which watches App.Done (closed when Shutdown
// begins, after readiness has turned to 503) and then sends 1001 to
// every open connection at once, each from a goroutine of its own (a
// peer that stopped reading holds only its own, for at most
// WriteTimeout); the handler's read then ends with the peer's answer, or
// after Config.CloseTimeout. Making it also registers on the App an
// OnShutdown function that waits for every handler of the route to
// return: Shutdown returns only after that, within the longest
// CloseTimeout plus WriteTimeout of the routes after the 1001 went out (a
// handler that ignores its reads and c.Context() is not waited for
// longer; Shutdown then reports it). That function also drops the
// registry from the route, so a route keeps no App past its Shutdown.

// registry is the open connections of one route on one App.
type registry struct {
	app   *fx.App
	wait  time.Duration // the route's CloseTimeout + WriteTimeout
	mu    sync.Mutex
	conns map[*Conn]struct{}
	idle  chan struct{} // closed when conns empties during shutdown
	// swept: App.Done is closed and the open connections were sent 1001
	// (at sweptAt); a connection added later sends its own.
	swept   bool
	sweptAt time.Time
}

// registryOf returns the route's registry for app, making it (with its
// 1001 goroutine and its OnShutdown function) on the route's first
// connection on app.
func (s *server) registryOf(app *fx.App) *registry {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	for _, r := range s.registries {
		if r.app == app {
			return r
		}
	}
	r := &registry{app: app, wait: s.cfg.CloseTimeout + s.cfg.WriteTimeout, conns: map[*Conn]struct{}{}}
	s.registries = append(s.registries, r)
	go r.goingAway(app.Done())
	app.OnShutdown(func() error {
		s.forget(r)
		return r.drain()
	})
	return r
}

// forget drops r from the route's registries: its App is shutting down.
func (s *server) forget(r *registry) {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	for i, x := range s.registries {
		if x == r {
			s.registries = append(s.registries[:i], s.registries[i+1:]...)
			return
		}
	}
}

// add registers c and reports whether Shutdown has already swept the
// open connections (c must then send its 1001 itself).
func (r *registry) add(c *Conn) (swept bool) {
	r.mu.Lock()
	r.conns[c] = struct{}{}
	swept = r.swept
	r.mu.Unlock()
	return swept
}

// goingAway waits for done (App.Done) and sends 1001 to every open
// connection, each on a goroutine of its own.
func (r *registry) goingAway(done <-chan struct{}) {
	<-done
	r.mu.Lock()
	r.swept, r.sweptAt = true, time.Now()
	open := make([]*Conn, 0, len(r.conns))
	for c := range r.conns {
		open = append(open, c)
	}
	r.mu.Unlock()
	for _, c := range open {
		go c.goingAway()
	}
}

func (r *registry) done(c *Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	if len(r.conns) == 0 && r.idle != nil {
		close(r.idle)
		r.idle = nil
	}
	r.mu.Unlock()
}

// drain waits until every connection's handler has returned (each was
// sent 1001 when Shutdown began), at most the registry's wait after the
// 1001 went out: the App's OnShutdown functions run one after another,
// and a route drained after another one has had that time too.
func (r *registry) drain() error {
	r.mu.Lock()
	if len(r.conns) == 0 {
		r.mu.Unlock()
		return nil
	}
	if r.idle == nil {
		r.idle = make(chan struct{})
	}
	idle, deadline := r.idle, time.Now().Add(r.wait)
	if r.swept {
		deadline = r.sweptAt.Add(r.wait)
	}
	r.mu.Unlock()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-idle:
		return nil
	case <-t.C:
		r.mu.Lock()
		n := len(r.conns)
		r.mu.Unlock()
		return fmt.Errorf("websocket: %d handlers still running %v after the 1001 was sent", n, r.wait)
	}
}
