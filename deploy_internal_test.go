package fx

import (
	"errors"
	"net"
	"os"
	"strconv"
	"testing"
)

// TestActivationIgnoresAnotherProcesssSockets: LISTEN_FDS meant for
// another process (LISTEN_PID is not ours: the variables leaked into a
// child's environment) is left alone, variables included; a malformed
// count meant for this process is an error, and the variables are
// removed so that nothing this process starts takes them.
func TestActivationIgnoresAnotherProcesssSockets(t *testing.T) {
	t.Setenv(envListenPID, strconv.Itoa(os.Getpid()+1))
	t.Setenv(envListenFDs, "1")
	if lns, err := readActivation(); lns != nil || err != nil {
		t.Fatalf("another process's sockets: %v, %v", lns, err)
	}
	if os.Getenv(envListenFDs) != "1" {
		t.Error("the variables meant for another process were removed")
	}

	t.Setenv(envListenPID, strconv.Itoa(os.Getpid()))
	t.Setenv(envListenFDs, "many")
	if _, err := readActivation(); err == nil {
		t.Error(`LISTEN_FDS="many" accepted`)
	}
	for _, v := range []string{envListenPID, envListenFDs, envListenFDNames} {
		if _, ok := os.LookupEnv(v); ok {
			t.Errorf("%s still in the environment", v)
		}
	}
}

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
// caller's, so Upgrade has nothing to hand on and says so, and the App
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
	if err := app.Upgrade(); !errors.Is(err, ErrUpgradeUnsupported) {
		t.Errorf("Upgrade: %v, want ErrUpgradeUnsupported", err)
	}
	if app.ShuttingDown() {
		t.Error("a refused Upgrade began the shutdown")
	}
	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
