// Command goguest is the Go guest the wasm tests build with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o goguest.wasm ./wasm/testdata/goguest
//
// Its behaviour is chosen by the last path segment.
package main

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fxhq/fx/wasm/guest"
)

var calls int // per-instance state: proves a failed instance is not reused

var sink [][]byte

func init() {
	guest.Handle(func(r guest.Request) guest.Response {
		calls++
		switch r.Path[strings.LastIndexByte(r.Path, '/')+1:] {
		case "echo":
			h := guest.Header{
				{"X-Method", r.Method},
				{"X-Path", r.Path},
				{"X-Query", r.Query},
				{"X-Foo", strings.Join(r.Header.Values("X-Foo"), "|")},
				{"X-Id", r.Param("id")},
				{"X-Calls", strconv.Itoa(calls)},
				{"Content-Type", "application/octet-stream"},
			}
			return guest.Response{Status: 201, Header: h, Body: r.Body}
		case "hello":
			return guest.Text(200, "hello from go")
		case "panic":
			panic("boom from the guest")
		case "nil":
			var p *guest.Request
			return guest.Text(200, p.Method)
		case "oom":
			for {
				sink = append(sink, make([]byte, 1<<20))
			}
		case "exit":
			os.Exit(3)
		case "loop":
			for {
				calls++
			}
		case "sleep": // must end at Config.Timeout, never answer "woke"
			time.Sleep(30 * time.Second)
			return guest.Text(200, "woke")
		case "badheader":
			return guest.Response{Status: 200, Header: guest.Header{{"Connection", "close"}}}
		case "stderr":
			os.Stderr.WriteString("written to stderr\n")
			panic("after stderr")
		}
		return guest.Text(404, "no such command")
	})
}

func main() {}
