package fx

import (
	"fmt"
	"math"
	"net"
	"os"

	"github.com/fxhq/fx/internal/conn"
)

// Where the listening sockets come from. Listen and Run take, for their
// addr, the first of:
//
//  1. the sockets the old process of a hand-off passed for addr
//     (handoff.go: inherited);
//  2. the sockets of socket activation, all of them, whatever addr says
//     (activation.go: ActivatedListeners);
//  3. a new socket from net.Listen.
//
// Whichever it is, the sockets are recorded for HandOff, and each is
// served by Serve, which is where the new process of a hand-off reports
// ready (reportReady), once every socket passed to it has been taken and
// one of them is being served. The first two are descriptors this process
// inherited, from 3 on: inheritedListeners reads both.

// listen returns the listening sockets for addr, from the first source
// above that has any, and records them for HandOff.
func (a *App) listen(addr string) ([]net.Listener, error) {
	lns, err := inherited(addr)
	if err != nil {
		return nil, err
	}
	if lns == nil {
		act, err := ActivatedListeners()
		if err != nil {
			return nil, err
		}
		for _, s := range act {
			lns = append(lns, s.Listener)
		}
		if lns != nil {
			a.logger.Info("fx: serving the sockets of socket activation", "count", len(lns), "addr_ignored", addr)
		}
	}
	if lns == nil {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		lns = []net.Listener{ln}
	}
	a.up.record(addr, lns)
	return lns, nil
}

const (
	// listenFDsStart is the first inherited descriptor (after stdin,
	// stdout and stderr), in both protocols.
	listenFDsStart = 3

	// maxInherited bounds a count of inherited descriptors where the
	// descriptor limit is unknown or unlimited: the largest count whose
	// descriptors an int32 numbers, as sd_listen_fds(3) allows.
	maxInherited = math.MaxInt32 - listenFDsStart
)

// inheritedListeners turns the n descriptors from 3 on into listeners, in
// descriptor order; names[i] (when there is one) names descriptor 3+i in
// errors. Each passed descriptor is closed once duplicated (the listener
// holds a close-on-exec, non-blocking duplicate), so none leaks into a
// process this one starts.
//
// One rule for both sources: the first descriptor that is not a listening
// stream socket ends the reading, the listeners taken so far are closed
// and the error is returned, with no listener. The descriptors are
// numbered by their place in a description (a count, a list of keys); one
// that is not what the description says means the description does not
// match what was passed, so the ones after it are not known to be this
// process's either, and turning them into listeners could take and close
// a descriptor the runtime or a library owns. For the same reason a count
// past the descriptors the process may have (RLIMIT_NOFILE less the three
// standard ones) is refused with no descriptor touched: it cannot be true,
// and allocating for it could exhaust memory. A process handed a wrong
// description serves none of it: Listen and Run return the error.
func inheritedListeners(n int, names []string) ([]net.Listener, error) {
	if limit := conn.NofileLimit(); n > maxInherited || (limit > 0 && uint64(n)+listenFDsStart > limit) {
		return nil, fmt.Errorf("%d descriptors are more than the process may have (RLIMIT_NOFILE %d)", n, limit)
	}
	lns := make([]net.Listener, 0, min(n, 64))
	for i := range n {
		fd := listenFDsStart + i
		name := ""
		if i < len(names) {
			name = names[i]
		}
		f := os.NewFile(uintptr(fd), "inherited:"+name)
		ln, err := net.FileListener(f) // a duplicate, close-on-exec, non-blocking
		f.Close()                      // the passed descriptor itself
		if err != nil {
			for _, ln := range lns {
				ln.Close()
			}
			return nil, fmt.Errorf("descriptor %d (%q) is not a listening stream socket: %w", fd, name, err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}
