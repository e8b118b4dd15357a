package fx_test

import (
	"context"
	"log"
	"syscall"

	"github.com/fxhq/fx"
)

// Replacing the binary without dropping a connection: deploy the new
// binary at the same path, then `kill -HUP <pid>`. The new process takes
// the listening socket over; once it serves, this one drains and Run
// returns nil. Under systemd socket activation the same Run serves
// systemd's socket, and a plain restart drops nothing either.
func ExampleRunConfig_handOffSignal() {
	app := fx.New()
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "hello") })
	err := app.Run(context.Background(), ":8080", fx.RunConfig{
		HandOffSignal: syscall.SIGHUP,
		PIDFile:       "/run/hello/hello.pid", // follows the hand-off
	})
	if err != nil {
		log.Fatal(err)
	}
}

// Serving the sockets of socket activation yourself, each by its name
// (Run and Listen serve them all on their own).
func ExampleActivatedListeners() {
	app := fx.New()
	socks, err := fx.ActivatedListeners()
	if err != nil || len(socks) == 0 {
		log.Fatal("not started by socket activation: ", err)
	}
	for _, s := range socks[1:] {
		go app.Serve(s.Listener)
	}
	log.Printf("serving %s (%s)", socks[0].Listener.Addr(), socks[0].Name)
	log.Fatal(app.Serve(socks[0].Listener))
}
