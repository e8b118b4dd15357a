// Command icount runs one typed endpoint's handler n times in process, as
// BenchmarkTyped does, for counting its instructions under valgrind: a
// measure the machine's load does not move, where wall-clock time on a
// shared machine does. Run it twice with different -n and divide the
// difference of the two counts by the difference of n:
//
//	go build -o /tmp/icount ./cmd/icount
//	GOGC=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no /tmp/icount -fw fx -ep typed-valid -n 2000
//	GOGC=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no /tmp/icount -fw fx -ep typed-valid -n 22000
//
// (GOGC=off keeps the collector's cycles, which fall at different
// requests from run to run, out of the count.)
//
// With -chunks, it measures CPU time instead: the hand-written handler
// and fx's take turns, each running -n requests per turn, -chunks turns
// each, and it prints the process's CPU time per request (user and
// system, the collector's included) of each turn's fastest, tenth
// percentile and median, and fx's ratio to the hand-written handler at
// each. CPU time leaves out the time the process waits for a core, the
// largest noise of wall-clock time on a loaded machine; taking turns puts
// both handlers under the same spells of load:
//
//	/tmp/icount -ep typed-valid -n 3000 -chunks 100
package main

import (
	"flag"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/fxhq/fx/bench"
	"github.com/valyala/fasthttp"
)

func main() {
	n := flag.Int("n", 1000, "requests (with -chunks: per turn)")
	fw := flag.String("fw", "fx", "raw-fasthttp or fx")
	ep := flag.String("ep", "typed-valid", "endpoint")
	chunks := flag.Int("chunks", 0, "turns per handler: measure CPU time per request, raw-fasthttp and fx taking turns")
	flag.Parse()
	var e bench.Endpoint
	for _, x := range bench.TypedEndpoints {
		if x.Name == *ep {
			e = x
		}
	}
	if e.Name == "" {
		panic("no endpoint " + *ep)
	}
	if *chunks > 0 {
		cpuTurns(e, *n, *chunks)
		return
	}
	h := bench.NewFXTyped(0).FastHTTP
	if *fw == "raw-fasthttp" {
		h = bench.NewRawTyped(0).FastHTTP
	}
	ctx := requestCtx(e)
	for k := 0; k < *n; k++ {
		serve(h, ctx)
	}
	if ctx.Response.StatusCode() != e.Status {
		panic(fmt.Sprint(ctx.Response.StatusCode()))
	}
}

// requestCtx is e's request, as BenchmarkTyped builds it.
func requestCtx(e bench.Endpoint) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.Header.SetMethod(e.Method)
	req.SetRequestURI(e.Path)
	req.Header.SetHost("127.0.0.1")
	req.Header.SetContentType("application/json")
	req.SetBodyString(e.Body)
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&req, nil, nil)
	return ctx
}

// serve runs one request, as BenchmarkTyped's runner does.
func serve(h fasthttp.RequestHandler, ctx *fasthttp.RequestCtx) {
	ctx.Response.Reset()
	ctx.ResetUserValues()
	h(ctx)
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuTurns is -chunks: see the command's documentation.
func cpuTurns(e bench.Endpoint, n, chunks int) {
	names := []string{"raw-fasthttp", "fx"}
	hs := []fasthttp.RequestHandler{bench.NewRawTyped(0).FastHTTP, bench.NewFXTyped(0).FastHTTP}
	ctxs := []*fasthttp.RequestCtx{requestCtx(e), requestCtx(e)}
	per := make([][]float64, len(hs))
	for range chunks {
		for i, h := range hs {
			t0 := cpuTime()
			for range n {
				serve(h, ctxs[i])
			}
			per[i] = append(per[i], float64(cpuTime()-t0)/float64(n))
			if ctxs[i].Response.StatusCode() != e.Status {
				panic(fmt.Sprint(names[i], " answered ", ctxs[i].Response.StatusCode()))
			}
		}
	}
	at := func(v []float64, q float64) float64 { return v[int(q*float64(len(v)-1))] }
	for i := range per {
		slices.Sort(per[i])
	}
	fmt.Printf("%s, CPU ns per request over %d turns of %d requests each:\n", e.Name, chunks, n)
	for i, v := range per {
		b := per[0]
		fmt.Printf("%-13s min %5.0f (%.2fx)  p10 %5.0f (%.2fx)  median %5.0f (%.2fx)\n", names[i],
			v[0], v[0]/b[0], at(v, .1), at(v, .1)/at(b, .1), at(v, .5), at(v, .5)/at(b, .5))
	}
}
