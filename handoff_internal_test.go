package fx

import (
	"errors"
	"net"
	"os"
	"strconv"
	"testing"
)

// TestHandoffIgnoresAnotherParentsVariable: FX_HANDOFF naming a PID other
// than the parent's (a variable leaked into the environment) gives no
// inherited socket and no readiness pipe, and is removed.
func TestHandoffIgnoresAnotherParentsVariable(t *testing.T) {
	t.Setenv(envHandoff, strconv.Itoa(os.Getppid()+1)+" "+"127.0.0.1%3A8080")
	readHandoff()
	if handoff.lns != nil || handoff.ready != nil || handoff.err != nil {
		t.Errorf("took a hand-off meant for another process: %v %v %v", handoff.lns, handoff.ready, handoff.err)
	}
	if _, ok := os.LookupEnv(envHandoff); ok {
		t.Error("FX_HANDOFF still in the environment")
	}
}

// TestUpgradeNeedsAListenerOfRunOrListen: a listener given to Serve is the
// caller's, so HandOff has nothing to hand on and says so, and the App
// keeps serving.
func TestUpgradeNeedsAListenerOfRunOrListen(t *testing.T) {
	app := New()
	app.Get("/", func(c *Ctx) error { return c.Send(200, "text/plain", []byte("ok")) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- app.Serve(ln) }()
	if err := app.HandOff(); !errors.Is(err, ErrHandOffUnsupported) {
		t.Errorf("Upgrade: %v, want ErrHandOffUnsupported", err)
	}
	if app.life.stop.begun() {
		t.Error("a refused HandOff began the shutdown")
	}
	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
