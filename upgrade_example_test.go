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
func ExampleRunConfig_upgradeSignal() {
	app := fx.New()
	app.Get("/", func(c *fx.Ctx) error { return c.JSON(200, "hello") })
	err := app.Run(context.Background(), ":8080", fx.RunConfig{
		UpgradeSignal: syscall.SIGHUP,
		PIDFile:       "/run/hello/hello.pid", // follows the hand-off
	})
	if err != nil {
		log.Fatal(err)
	}
}

// Serving the sockets of socket activation yourself, here over TLS
// (Run and Listen serve them on their own, without TLS).
func ExampleActivatedListeners() {
	app := fx.New()
	socks, err := fx.ActivatedListeners()
	if err != nil || len(socks) == 0 {
		log.Fatal("not started by socket activation: ", err)
	}
	cfg := fx.TLSConfig() // add Certificates
	for _, s := range socks[1:] {
		go app.ServeTLS(s.Listener, cfg)
	}
	log.Printf("serving %s (%s)", socks[0].Listener.Addr(), socks[0].Name)
	log.Fatal(app.ServeTLS(socks[0].Listener, cfg))
}
