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
// Block and mutex profiling cost time of their own (at 1,000 connections
// they cut fx's req/s by more than half in one run): compare such profiles
// with each other, not their run's req/s with a run without them. With
// FX_BENCH_PPROF_CPU_ONLY=1 as well they stay off, for CPU profiles and
// traces of a server running at full speed.
func init() {
	addr := os.Getenv("FX_BENCH_PPROF")
	if addr == "" {
		return
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		panic("FX_BENCH_PPROF must be a 127.0.0.1 address")
	}
	if os.Getenv("FX_BENCH_PPROF_CPU_ONLY") == "" {
		runtime.SetBlockProfileRate(10_000) // one sample per 10 µs blocked
		runtime.SetMutexProfileFraction(10)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		panic(err)
	}
	go func() { _ = http.Serve(ln, nil) }() // ends with the process
}
