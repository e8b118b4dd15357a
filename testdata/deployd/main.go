// Command deployd is the server the deploy tests (deploy_unix_test.go)
// replace under load: a real process, started, upgraded and restarted as
// a user would.
//
//	GET  /work?ms=N  200 after N milliseconds (a request in flight during a replacement)
//	POST /orders     201; records its Idempotency-Key in EXECLOG, one line per execution
//	GET  /until-drain  200 once this process's shutdown (its drain) has begun, at most 20 s
//	GET  /readyz     the readiness probe of package health (503 while draining)
//	POST /upload     200 "got N" once the whole body (N bytes) has arrived
//
// Environment: ADDR (where to listen), PIDFILE (RunConfig.PIDFile),
// GRACE (RunConfig.GracePeriod, a time.ParseDuration; default 10s),
// UPGRADE=1 (SIGHUP hands the socket on to a new process: HandOff),
// EXECLOG (the file POST /orders appends to). It serves with Run, so
// socket activation (LISTEN_FDS) is used when present.
package main

import (
	"context"
	"log"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/health"
	"github.com/fxhq/fx/middleware/idempotency"
)

func main() {
	app := fx.New(fx.Config{Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	pid := strconv.Itoa(os.Getpid())

	var logMu sync.Mutex
	execLog, err := os.OpenFile(os.Getenv("EXECLOG"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	defer execLog.Close()

	health.New().Register(app)
	app.Get("/work", func(c *fx.Ctx) error {
		ms, _ := strconv.Atoi(string(c.RequestCtx().QueryArgs().Peek("ms")))
		time.Sleep(time.Duration(ms) * time.Millisecond)
		c.SetHeader("X-Pid", pid)
		return c.Send(200, "text/plain", []byte("ok"))
	})
	app.Get("/until-drain", func(c *fx.Ctx) error {
		select {
		case <-c.Context().Done(): // the shutdown has begun
		case <-time.After(20 * time.Second):
		}
		c.SetHeader("X-Pid", pid)
		return c.Send(200, "text/plain", []byte("ok"))
	})
	app.Post("/upload", func(c *fx.Ctx) error {
		c.SetHeader("X-Pid", pid)
		return c.Send(200, "text/plain", []byte("got "+strconv.Itoa(len(c.Body()))))
	})
	orders := app.Group("", idempotency.New(idempotency.Config{Required: true}))
	orders.Post("/orders", func(c *fx.Ctx) error {
		key := string(c.RequestCtx().Request.Header.Peek("Idempotency-Key"))
		logMu.Lock()
		_, err := execLog.WriteString(key + " " + pid + "\n") // one write: whole lines across processes (O_APPEND)
		logMu.Unlock()
		if err != nil {
			return err
		}
		return c.JSON(201, map[string]string{"pid": pid})
	})

	rc := fx.RunConfig{PIDFile: os.Getenv("PIDFILE"), GracePeriod: 10 * time.Second}
	if g := os.Getenv("GRACE"); g != "" {
		if rc.GracePeriod, err = time.ParseDuration(g); err != nil {
			log.Fatal(err)
		}
	}
	if os.Getenv("UPGRADE") == "1" {
		rc.HandOffSignal = syscall.SIGHUP
	}
	if err := app.Run(context.Background(), os.Getenv("ADDR"), rc); err != nil {
		log.Fatal(err)
	}
}
