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
// an interrupt, after which in-flight requests finish and Serve returns.
// It exits the process on a listen or boot error.
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

	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		if err := app.Shutdown(); err != nil {
			log.Print(err)
		}
	}()
	if err := app.Serve(ln); err != nil {
		log.Fatal(err)
	}
}
