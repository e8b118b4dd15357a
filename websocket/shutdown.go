package websocket

import (
	"fmt"
	"sync"
	"time"

	"github.com/fxhq/fx"
)

// Shutdown. fasthttp forgets a connection once it is hijacked, so the
// App's Shutdown does not wait for WebSocket connections by itself. One
// goroutine per App (started with its first WebSocket connection) watches
// App.Done, closed when Shutdown begins (after readiness has turned to
// 503: App.Done), and sends 1001 to every open connection at
// once, each from a goroutine of its own (a peer that stopped reading
// holds only its own, for at most WriteTimeout); the handler's read then ends with the peer's answer, or after
// Config.CloseTimeout. The package registers, once per App, an OnShutdown
// function that waits for every handler of the App to return: Shutdown
// returns only after that, within the longest CloseTimeout of the routes
// plus their WriteTimeout (a handler that ignores its reads and
// c.Context() is not waited for longer; Shutdown then reports it).

// registry is one App's open connections.
type registry struct {
	mu    sync.Mutex
	conns map[*Conn]struct{}
	wait  time.Duration // the longest CloseTimeout + WriteTimeout of its connections
	idle  chan struct{} // closed when conns empties during shutdown
	// draining: App.Done is closed and the open connections were sent
	// 1001; a connection added later sends its own.
	draining bool
}

var registries sync.Map // *fx.App → *registry

// registryOf returns app's registry, registering its OnShutdown function
// on first use.
func registryOf(app *fx.App) *registry {
	if r, ok := registries.Load(app); ok {
		return r.(*registry)
	}
	r, loaded := registries.LoadOrStore(app, &registry{conns: map[*Conn]struct{}{}})
	reg := r.(*registry)
	if !loaded {
		go reg.goingAway(app.Done())
		app.OnShutdown(func() error {
			registries.Delete(app)
			return reg.drain()
		})
	}
	return reg
}

// add registers c and reports whether Shutdown has already swept the
// open connections (c must then send its 1001 itself).
func (r *registry) add(c *Conn) (draining bool) {
	r.mu.Lock()
	r.conns[c] = struct{}{}
	if w := c.cfg.CloseTimeout + c.cfg.WriteTimeout; w > r.wait {
		r.wait = w
	}
	draining = r.draining
	r.mu.Unlock()
	return draining
}

// goingAway waits for done (App.Done) and sends 1001 to every open
// connection, each on a goroutine of its own.
func (r *registry) goingAway(done <-chan struct{}) {
	<-done
	r.mu.Lock()
	r.draining = true
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
// sent 1001 when Shutdown began), within the registry's bound.
func (r *registry) drain() error {
	r.mu.Lock()
	if len(r.conns) == 0 {
		r.mu.Unlock()
		return nil
	}
	if r.idle == nil {
		r.idle = make(chan struct{})
	}
	idle, wait := r.idle, r.wait
	r.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-idle:
		return nil
	case <-t.C:
		r.mu.Lock()
		n := len(r.conns)
		r.mu.Unlock()
		return fmt.Errorf("websocket: %d handlers still running %v after the 1001 was sent", n, wait)
	}
}
