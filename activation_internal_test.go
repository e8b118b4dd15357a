package fx

import (
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
