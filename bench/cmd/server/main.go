// Command server serves one implementation of the bench service for the
// load test (load.sh): the plain build on -addr and, when -addr-mw is set,
// the build with five pass-through middleware on that address and, when
// -addr-orders is set, the flagship orders service (bench.FlagshipFrameworks:
// fx, huma, fiber-v3) with the API key bench.FlagshipLoadKey of tenant
// bench.FlagshipLoadTenant and a rate limit no run reaches. It stops on
// SIGINT or SIGTERM.
//
//	server -fw fx -addr 127.0.0.1:18080 -addr-mw 127.0.0.1:18081 -addr-orders 127.0.0.1:18082
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
	addrOrders := flag.String("addr-orders", "", "address of the flagship orders service (optional; fx, huma, fiber-v3)")
	flag.Parse()
	f, ok := bench.Lookup(*fw)
	if !ok {
		fmt.Fprintf(os.Stderr, "server: unknown -fw %q; one of %s\n", *fw, names())
		os.Exit(2)
	}
	flagship, hasFlagship := bench.LookupFlagship(*fw)
	if *addrOrders != "" && !hasFlagship {
		fmt.Fprintf(os.Stderr, "server: -fw %q has no flagship orders service\n", *fw)
		os.Exit(2)
	}
	var lns []net.Listener
	errc := make(chan error, 3)
	serve := func(addr string, impl bench.Impl) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
			os.Exit(1)
		}
		lns = append(lns, ln)
		go func() { errc <- impl.Serve(ln) }()
	}
	serve(*addr, f.New(0))
	if *addrMW != "" {
		serve(*addrMW, f.New(bench.MiddlewareChain))
	}
	if *addrOrders != "" {
		serve(*addrOrders, flagship.New(map[string]string{bench.FlagshipLoadKey: bench.FlagshipLoadTenant}, bench.FlagshipLoadLimit))
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
