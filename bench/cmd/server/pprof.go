package main

import (
	"net"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof/ on http.DefaultServeMux
	"os"
	"runtime"
	"strings"
)

// With FX_BENCH_PPROF=127.0.0.1:6060 in the environment, the server also
// serves net/http/pprof on that loopback address, with block and mutex
// profiling on, for profiling under load (see scale.sh):
//
//	curl -o cpu.pprof 'http://127.0.0.1:6060/debug/pprof/profile?seconds=5'
//	curl -o trace.out 'http://127.0.0.1:6060/debug/pprof/trace?seconds=2'
//	go tool trace -pprof=sched trace.out > sched.pprof
//
// Block and mutex profiling cost time of their own: compare profiles with
// each other, not their run's req/s with a run without them.
func init() {
	addr := os.Getenv("FX_BENCH_PPROF")
	if addr == "" {
		return
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		panic("FX_BENCH_PPROF must be a 127.0.0.1 address")
	}
	runtime.SetBlockProfileRate(10_000) // one sample per 10 µs blocked
	runtime.SetMutexProfileFraction(10)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		panic(err)
	}
	go func() { _ = http.Serve(ln, nil) }() // ends with the process
}
