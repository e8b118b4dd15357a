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

// One route handler served by two Apps keeps each App's connections
// apart: the first App's Shutdown closes its own with 1001 and waits for
// them only; the other App's connection stays open and served, and gets
// its 1001 from its own App's Shutdown.
func TestShutdownClosesOnlyItsAppsConnections(t *testing.T) {
	echo := websocket.New(func(c *websocket.Conn) error {
		for {
			mt, msg, err := c.ReadMessage()
			if err != nil {
				return nil
			}
			if err := c.WriteMessage(mt, msg); err != nil {
				return nil
			}
		}
	}, websocket.Config{CloseTimeout: 200 * time.Millisecond}) // the client reads the 1001 after Shutdown returns
	first := serve(t, func(app *fx.App) { app.Get("/ws", echo) })
	second := serve(t, func(app *fx.App) { app.Get("/ws", echo) })
	c1, c2 := first.dial(t, "/ws", nil), second.dial(t, "/ws", nil)
	for _, c := range []*gws.Conn{c1, c2} { // both handlers are running
		if err := c.WriteMessage(gws.TextMessage, []byte("hi")); err != nil {
			t.Fatal(err)
		}
		if _, msg, err := c.ReadMessage(); err != nil || string(msg) != "hi" {
			t.Fatalf("echo: %q, %v", msg, err)
		}
	}

	if err := first.app.Shutdown(); err != nil {
		t.Fatalf("the first App's Shutdown: %v", err)
	}
	if code, _ := closeOf(t, c1); code != 1001 {
		t.Errorf("the first App's connection closed with %d; want 1001", code)
	}
	if err := c2.WriteMessage(gws.TextMessage, []byte("still here")); err != nil {
		t.Fatal(err)
	}
	_ = c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, msg, err := c2.ReadMessage(); err != nil || string(msg) != "still here" {
		t.Fatalf("the second App's connection after the first App's Shutdown: %q, %v; want its echo", msg, err)
	}
	if err := second.app.Shutdown(); err != nil {
		t.Fatalf("the second App's Shutdown: %v", err)
	}
	if code, _ := closeOf(t, c2); code != 1001 {
		t.Errorf("the second App's connection closed with %d; want 1001", code)
	}
}
