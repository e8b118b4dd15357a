// Command loadtarget is the server scripts/load.sh drives with wrk: one
// route per kind of outcome, so the load covers the error boundary as much
// as the success path.
//
//	GET  /hello          200 {"message":"Hello, fx!"}
//	GET  /users/:id      200 {"id":...}
//	GET  /conflict/:id   409 APP_CONFLICT (an *fx.Error with details)
//	GET  /panic          500 FX_INTERNAL_ERROR (the handler panics)
//	GET  /anything-else  404 FX_NOT_FOUND
//	POST /items          201 with a valid body, 422 FX_VALIDATION_ERROR otherwise
//	GET  /_stats         200 {"goroutines":..,"heap_inuse":..,...} for the script
//
// It listens on ADDR (default 127.0.0.1:0) and prints "listening on
// http://HOST:PORT" once ready. Logging is off unless LOG=1: the panic
// route would otherwise log a stack per request and the load would measure
// the log sink.
//
// To run it by hand:
//
//	ADDR=127.0.0.1:8080 go run ./examples/loadtarget
//	curl -i localhost:8080/conflict/7                                                 # 409
//	curl -i -X POST localhost:8080/items -H 'Content-Type: application/json' -d '{}'   # 422
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"runtime"

	"github.com/fxhq/fx"
)

type item struct {
	Name string `json:"name"`
	Qty  int    `json:"qty"`
}

func main() {
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError + 1}))
	if os.Getenv("LOG") == "1" {
		logger = slog.Default()
	}
	app := fx.New(fx.Config{Logger: logger})

	app.Get("/hello", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"message": "Hello, fx!"})
	})
	app.Get("/users/:id", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"id": c.Param("id")})
	})
	app.Get("/conflict/:id", func(c *fx.Ctx) error {
		return fx.NewError(409, "APP_CONFLICT", "User already exists", map[string]string{"id": c.Param("id")})
	})
	app.Get("/panic", func(c *fx.Ctx) error {
		panic(errors.New("something broke"))
	})
	app.Post("/items", func(c *fx.Ctx) error {
		it, err := fx.JSONBody[item](c)
		if err != nil {
			return err
		}
		if it.Name == "" {
			return fx.NewValidationError([]fx.ValidationIssue{{Location: "body", Path: []string{"name"}, Message: "Required"}})
		}
		return c.JSON(201, it)
	})
	app.Get("/_stats", func(c *fx.Ctx) error {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return c.JSON(200, map[string]uint64{
			"goroutines": uint64(runtime.NumGoroutine()),
			"heap_inuse": ms.HeapInuse,
			"heap_alloc": ms.HeapAlloc,
			"sys":        ms.Sys,
			"num_gc":     uint64(ms.NumGC),
		})
	})

	addr := cmp.Or(os.Getenv("ADDR"), "127.0.0.1:0")
	err := app.Run(context.Background(), addr, fx.RunConfig{
		// scripts/load.sh reads this line from stdout.
		OnListen: func(a net.Addr) { fmt.Printf("listening on http://%s\n", a) },
	})
	if err != nil {
		log.Fatal(err)
	}
}
