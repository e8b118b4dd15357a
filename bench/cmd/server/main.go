// Command server serves one implementation of the bench service for the
// load test (load.sh): the plain build on -addr and, when -addr-mw is set,
// the build with five pass-through middleware on that address. It stops
// on SIGINT or SIGTERM.
//
//	server -fw fx -addr 127.0.0.1:18080 -addr-mw 127.0.0.1:18081
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/fxhq/fx/bench"
)

func main() {
	fw := flag.String("fw", "", "framework: "+names())
	addr := flag.String("addr", "127.0.0.1:18080", "address of the plain build (loopback only)")
	addrMW := flag.String("addr-mw", "", "address of the build with five pass-through middleware (optional)")
	flag.Parse()
	f, ok := bench.Lookup(*fw)
	if !ok {
		fmt.Fprintf(os.Stderr, "server: unknown -fw %q; one of %s\n", *fw, names())
		os.Exit(2)
	}
	var lns []net.Listener
	errc := make(chan error, 2)
	serve := func(addr string, mw int) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
			os.Exit(1)
		}
		lns = append(lns, ln)
		impl := f.New(mw)
		go func() { errc <- impl.Serve(ln) }()
	}
	serve(*addr, 0)
	if *addrMW != "" {
		serve(*addrMW, bench.MiddlewareChain)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sig:
	case err := <-errc:
		fmt.Fprintln(os.Stderr, "server:", err)
	}
	for _, ln := range lns {
		ln.Close()
	}
}

func names() string {
	var ns []string
	for _, f := range bench.Frameworks {
		ns = append(ns, f.Name)
	}
	return strings.Join(ns, ", ")
}
