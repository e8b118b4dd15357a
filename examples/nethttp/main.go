// Command nethttp serves an fx App from Go's standard net/http server,
// with HTTP/2 over TLS when a certificate is given, and mounts an existing
// net/http handler inside the App.
//
//	go run ./examples/nethttp                         # http://127.0.0.1:8081
//	ADDR=127.0.0.1:0 go run ./examples/nethttp        # any free port
//	TLS_CERT=cert.pem TLS_KEY=key.pem go run ./examples/nethttp   # HTTPS, HTTP/2
//
//	curl -i localhost:8081/hello
//	curl -i localhost:8081/users/missing
//	curl -i -X POST localhost:8081/echo -d '{"name":"ada"}'
//	curl -i localhost:8081/legacy/time
//	curl -i localhost:8081/nope
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/nethttp"
)

func main() {
	app := fx.New(fx.Config{BodyLimit: 1 << 20})

	app.Get("/hello", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"message": "Hello from fx on net/http", "proto": nethttp.Request(c).Proto})
	})
	app.Get("/users/:id", func(c *fx.Ctx) error {
		if id := c.Param("id"); id == "missing" {
			return fx.NewError(404, "APP_USER_NOT_FOUND", "User not found", map[string]string{"id": id})
		}
		return c.JSON(200, map[string]string{"id": c.Param("id")})
	})
	type person struct {
		Name string `json:"name"`
	}
	app.Post("/echo", func(c *fx.Ctx) error {
		p, err := fx.JSONBody[person](c)
		if err != nil {
			return err // 422 FX_VALIDATION_ERROR
		}
		return c.JSON(200, p)
	})
	app.Get("/slow", func(c *fx.Ctx) error {
		select {
		case <-time.After(5 * time.Second):
			return c.String(200, "done")
		case <-nethttp.Context(c).Done(): // the client went away
			return nethttp.Context(c).Err()
		}
	})
	// An existing net/http handler, mounted inside the App.
	app.Get("/legacy/*rest", nethttp.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "legacy handler at %s: %s\n", r.URL.Path, time.Now().UTC().Format(time.RFC3339))
	})))

	addr := os.Getenv("ADDR")
	if addr == "" {
		addr = "127.0.0.1:8081"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{
		Handler:           nethttp.Handler(app),
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    8 << 10,
	}
	cert, key := os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY")
	scheme := "http"
	if cert != "" {
		scheme = "https"
	}
	fmt.Printf("fx on net/http listening on %s://%s\n", scheme, ln.Addr())

	go func() {
		var err error
		if cert != "" {
			err = srv.ServeTLS(ln, cert, key) // HTTP/2 negotiated by ALPN
		} else {
			err = srv.Serve(ln)
		}
		if !errors.Is(err, http.ErrServerClosed) {
			log.Fatal(err)
		}
	}()

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Print(err)
	}
	if err := app.Shutdown(); err != nil { // runs OnShutdown hooks
		log.Print(err)
	}
}
