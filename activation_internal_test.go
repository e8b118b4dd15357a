package fx

import (
	"os"
	"strconv"
	"strings"
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

// TestActivationRefusesImpossibleCounts: a LISTEN_FDS count past the
// descriptors the process may have is a clean error, as sd_listen_fds(3)
// treats a bad count, with no descriptor touched; so are a negative and a
// malformed one. Before, 2147483647 ended the process with "fatal error:
// runtime: out of memory" (the listeners' slice was allocated for the
// count) and 9223372036854775807 panicked in makeslice.
func TestActivationRefusesImpossibleCounts(t *testing.T) {
	for _, fds := range []string{"2147483647", "9223372036854775807", "-1", "0x10", "99999999999999999999"} {
		t.Setenv(envListenPID, strconv.Itoa(os.Getpid()))
		t.Setenv(envListenFDs, fds)
		lns, err := readActivation()
		if err == nil || lns != nil {
			t.Errorf("LISTEN_FDS=%s: %v, %v; want an error", fds, lns, err)
		} else if !strings.Contains(err.Error(), "LISTEN_FDS") {
			t.Errorf("LISTEN_FDS=%s: the error does not name the variable: %v", fds, err)
		}
	}
}
