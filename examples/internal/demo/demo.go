// Package demo holds what every example server does the same way: listen
// on $ADDR (or a default), print the address, serve until SIGINT/SIGTERM,
// then shut down gracefully.
package demo

import (
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/fxhq/fx"
)

// Serve listens on $ADDR, or defaultAddr when it is unset, prints
// "listening on http://ADDR" (scripts read that line), and serves app until
// an interrupt, after which in-flight requests finish, the App's
// OnShutdown functions run and Serve returns. It exits the process on a
// listen or boot error.
func Serve(app *fx.App, defaultAddr string) {
	addr := os.Getenv("ADDR")
	if addr == "" {
		addr = defaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	serveErr, shutdownErr := serve(app, ln, sig)
	if serveErr != nil {
		log.Fatal(serveErr)
	}
	if shutdownErr != nil {
		log.Print(shutdownErr)
	}
}

// serve serves app on ln until stop delivers (or serving ends otherwise),
// then shuts app down. It returns only after Shutdown has returned:
// app.Serve itself returns as soon as the listener is closed, while
// requests are still in flight, and a main that exited then would cut them
// off and skip OnShutdown.
func serve(app *fx.App, ln net.Listener, stop <-chan os.Signal) (serveErr, shutdownErr error) {
	served := make(chan struct{})
	shutdown := make(chan error, 1)
	go func() {
		select {
		case <-stop:
		case <-served:
		}
		shutdown <- app.Shutdown()
	}()
	serveErr = app.Serve(ln)
	close(served)
	return serveErr, <-shutdown
}
