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
package main

import (
	"flag"
	"fmt"

	"github.com/fxhq/fx/bench"
	"github.com/valyala/fasthttp"
)

func main() {
	n := flag.Int("n", 1000, "requests")
	fw := flag.String("fw", "fx", "raw-fasthttp or fx")
	ep := flag.String("ep", "typed-valid", "endpoint")
	flag.Parse()
	h := bench.NewFXTyped(0).FastHTTP
	if *fw == "raw-fasthttp" {
		h = bench.NewRawTyped(0).FastHTTP
	}
	for _, e := range bench.TypedEndpoints {
		if e.Name != *ep {
			continue
		}
		var req fasthttp.Request
		req.Header.SetMethod(e.Method)
		req.SetRequestURI(e.Path)
		req.Header.SetHost("127.0.0.1")
		req.Header.SetContentType("application/json")
		req.SetBodyString(e.Body)
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, nil, nil)
		for k := 0; k < *n; k++ {
			ctx.Response.Reset()
			ctx.ResetUserValues()
			h(&ctx)
		}
		if ctx.Response.StatusCode() != e.Status {
			panic(fmt.Sprint(ctx.Response.StatusCode()))
		}
	}
}
