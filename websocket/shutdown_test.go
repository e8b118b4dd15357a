package websocket_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/websocket"
	gws "github.com/gorilla/websocket"
)

// Shutdown sends 1001 to every open connection (readiness already 503),
// waits for their handlers, and returns; a peer that never answers the
// close does not hold it past CloseTimeout.
func TestShutdownClosesEveryConnectionWith1001(t *testing.T) {
	app := fx.New()
	var running, ended, readyWhenClosed atomic.Int64
	app.Get("/ws", websocket.New(func(c *websocket.Conn) error {
		running.Add(1)
		defer ended.Add(1)
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				select {
				case <-c.Ctx().App().Done(): // what the readiness probe answers 503 on
					readyWhenClosed.Add(1)
				default:
				}
				return nil
			}
		}
	}, websocket.Config{CloseTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- app.Serve(ln) }()
	addr := ln.Addr().String()

	const n = 20
	codes := make(chan int, n)
	for i := 0; i < n; i++ {
		c, _, err := gws.DefaultDialer.Dial("ws://"+addr+"/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		go func() {
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					var ce *gws.CloseError
					if errors.As(err, &ce) {
						codes <- ce.Code
					} else {
						codes <- 0
					}
					return
				}
			}
		}()
	}
	silent, err := rawDial(addr, "/ws") // never answers the close
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	for running.Load() < n+1 {
		time.Sleep(time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := app.ShutdownWithContext(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	took := time.Since(start)
	if e := ended.Load(); e != n+1 {
		t.Errorf("Shutdown returned with %d of %d handlers ended", e, n+1)
	}
	if r := readyWhenClosed.Load(); r != n+1 {
		t.Errorf("%d of %d handlers saw the shutdown begun (readiness 503) when their connection closed", r, n+1)
	}
	if took > 3*time.Second {
		t.Errorf("Shutdown took %v; a silent peer holds it at most CloseTimeout", took)
	}
	for i := 0; i < n; i++ {
		select {
		case code := <-codes:
			if code != 1001 {
				t.Errorf("a client saw close %d; want 1001", code)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a client never saw its connection close")
		}
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// A handshake whose handler ran but whose 101 had not left when Shutdown
// began is answered 503 FX_SERVICE_UNAVAILABLE, not hijacked: Shutdown
// would never wait for it.
func TestHandshakeCaughtByShutdownIs503(t *testing.T) {
	var ran atomic.Bool
	s := serve(t, func(app *fx.App) {
		app.Get("/ws", websocket.New(func(c *websocket.Conn) error { ran.Store(true); return nil }))
		app.Use(func(c *fx.Ctx, next fx.Next) error {
			err := next()
			go c.App().Shutdown() // the test's cleanup waits for it
			<-c.App().Done()
			return err
		})
	})
	status, hdr, body := s.get(t, "/ws", handshake())
	if status != 503 || hdr.Get("Upgrade") != "" || !strings.Contains(body, `"code":"FX_SERVICE_UNAVAILABLE"`) {
		t.Errorf("handshake caught by Shutdown: %d Upgrade=%q %s; want the 503 envelope", status, hdr.Get("Upgrade"), body)
	}
	time.Sleep(50 * time.Millisecond)
	if ran.Load() {
		t.Error("the handler ran on a connection Shutdown does not wait for")
	}
}
