package fx

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Socket activation. A service manager (systemd's .socket units, and any
// other that follows the same protocol) opens the listening sockets
// itself and passes them to the process it starts: descriptors 3, 4, ...
// with LISTEN_FDS their count, LISTEN_PID the process they are meant for
// (a child that inherited the environment must not take them), and
// optionally LISTEN_FDNAMES their names, colon-separated
// (FileDescriptorName= in the .socket unit). Because the socket belongs to
// the manager, it outlives the process: during a restart the kernel keeps
// completing connections into its accept queue, where they wait for the
// next process instead of being refused or reset. That is the whole of a
// drop-free restart under systemd (docs/reliability.md has the units).
//
// Run and Listen use the activated sockets when there are any: they serve
// every one of them and ignore their addr argument (it is logged). The
// sockets are taken once per process: the first of ActivatedListeners,
// Run or Listen to look gets them, and the variables are then removed from
// the environment, so that processes this one starts (a hand-off, see
// HandOff) do not mistake them for their own.
//
// Cost: reading three environment variables once per process; nothing per
// connection (an activated socket is an ordinary *net.TCPListener or
// *net.UnixListener).

// Environment variables of the socket-activation protocol.
const (
	envListenPID     = "LISTEN_PID"
	envListenFDs     = "LISTEN_FDS"
	envListenFDNames = "LISTEN_FDNAMES"
)

// ActivatedListener is one listening socket a service manager passed to the
// process (socket activation).
type ActivatedListener struct {
	// Listener serves the socket; closing it closes this process's
	// descriptor, not the manager's.
	Listener net.Listener
	// Name is the socket's name from LISTEN_FDNAMES (systemd's
	// FileDescriptorName=, by default the .socket unit's name), or "" when
	// the manager passed no names.
	Name string
}

var activation struct {
	once  sync.Once
	mu    sync.Mutex
	taken bool
	lns   []ActivatedListener
	err   error
}

// ActivatedListeners returns the listening sockets passed to this process
// by socket activation (LISTEN_PID equal to the process ID, LISTEN_FDS at
// least 1), in descriptor order, and removes the protocol's variables from
// the environment. It returns nil, nil when there are none, or when they
// were already taken (by an earlier call, Run or Listen): each socket is
// handed out once. It returns an error when LISTEN_FDS is not a positive
// count of descriptors the process may have (at most RLIMIT_NOFILE less
// the three standard ones), touching no descriptor, and when a passed
// descriptor is not a stream socket (a datagram socket, a FIFO), having
// closed the ones up to it.
// Use it to serve the sockets yourself (Serve); Run and Listen take them
// on their own.
func ActivatedListeners() ([]ActivatedListener, error) {
	activation.once.Do(func() { activation.lns, activation.err = readActivation() })
	activation.mu.Lock()
	defer activation.mu.Unlock()
	if activation.taken {
		return nil, nil
	}
	activation.taken = true
	return activation.lns, activation.err
}

// readActivation reads the protocol's variables and turns the passed
// descriptors into listeners (inheritedListeners, listen.go, whose rules
// say which counts and descriptors are refused).
func readActivation() ([]ActivatedListener, error) {
	pid, fds := os.Getenv(envListenPID), os.Getenv(envListenFDs)
	names := os.Getenv(envListenFDNames)
	if fds == "" {
		return nil, nil
	}
	if p, err := strconv.Atoi(pid); err != nil || p != os.Getpid() {
		return nil, nil // meant for another process: leave the variables to it
	}
	os.Unsetenv(envListenPID)
	os.Unsetenv(envListenFDs)
	os.Unsetenv(envListenFDNames)
	n, err := strconv.Atoi(fds)
	if err != nil || n < 1 {
		return nil, fmt.Errorf("fx: socket activation: LISTEN_FDS=%q is not a positive count", fds)
	}
	var nameList []string
	if names != "" {
		nameList = strings.Split(names, ":")
	}
	lns, err := inheritedListeners(n, nameList)
	if err != nil {
		return nil, fmt.Errorf("fx: socket activation: LISTEN_FDS=%q: %w", fds, err)
	}
	act := make([]ActivatedListener, len(lns))
	for i, ln := range lns {
		act[i].Listener = ln
		if i < len(nameList) {
			act[i].Name = nameList[i]
		}
	}
	return act, nil
}
