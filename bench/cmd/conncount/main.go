// Command conncount counts the instructions a server of cmd/server runs
// per keep-alive connection and per request, under valgrind's cachegrind:
// a measure the machine's load does not move, where req/s on a shared
// machine does (scale.sh). It is how the connection layer's per-connection
// work is found: at thousands of connections, what a server does once per
// connection (accept, wrappers, buffers, growing the serving goroutine's
// stack) adds up beside what it does per request.
//
// For each framework (cmd/server -fw names) it runs a fresh server under
// cachegrind three times (GOGC=off, so that no collection falls inside one
// run and not another; GOMAXPROCS=1), each driven over 127.0.0.1 by
// -conns connections opened at once, each sending -reqs sequential GET
// /hello and reading the answers:
//
//	A: conns/4 connections, reqs requests each
//	B: conns connections, reqs requests each
//	C: conns connections, reqs+extra requests each
//
// per request = (C - B) / (conns × extra); per connection = (B - A) /
// (3/4 conns) - reqs × per request. Both are also given for the runtime's
// stack growth alone (copystack and the position-table decoding it does
// for every frame: runtime.step, pcvalue, ...). Keep each run shorter
// than fx's read timeout (10 s, and a server runs ~50 times slower under
// valgrind: the defaults take ~5 s), or the deadline armed at accept fires
// on every connection inside the run and is counted as theirs.
//
// Usage, in bench/ (valgrind must be installed; ~1 minute per framework):
//
//	go run ./cmd/conncount
//	go run ./cmd/conncount -fw "fx fiber-v3" -conns 4000 -reqs 1 -extra 1
//	go run ./cmd/conncount -fw fx -server /tmp/server-before
//
// Only 127.0.0.1 is used. The servers are stopped when it ends.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fxhq/fx/bench/cmd/internal/serverproc"
)

func main() {
	fws := flag.String("fw", "raw-fasthttp fx fiber-v3", "frameworks (cmd/server -fw names), space-separated")
	conns := flag.Int("conns", 1000, "connections of runs B and C (run A: a quarter)")
	reqs := flag.Int("reqs", 2, "requests per connection in runs A and B")
	extra := flag.Int("extra", 4, "more requests per connection in run C")
	port := flag.Int("port", 18290, "the server listens on 127.0.0.1:port")
	server := flag.String("server", "", "a cmd/server binary built before (a change's parent, for a before/after); default: build ./cmd/server")
	flag.Parse()
	if err := run(strings.Fields(*fws), *server, *conns, *reqs, *extra, *port); err != nil {
		fmt.Fprintln(os.Stderr, "conncount:", err)
		os.Exit(1)
	}
}

// count is one run's instructions: all of them, and the stack growth's.
type count struct{ total, stack float64 }

func run(fws []string, bin string, conns, reqs, extra, port int) error {
	if len(fws) == 0 || conns < 4 || reqs < 1 || extra < 1 {
		return errors.New("need a framework, at least 4 connections, 1 request and 1 extra request")
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		return errors.New("valgrind is not installed (apt-get install valgrind)")
	}
	tmp, err := os.MkdirTemp("", "conncount")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if bin == "" {
		if bin, err = serverproc.Build(tmp); err != nil {
			return err
		}
	}
	few := conns / 4
	type row struct{ conn, req count }
	rows := map[string]row{}
	for _, fw := range fws {
		var c [3]count
		for i, r := range [...]struct{ conns, reqs int }{{few, reqs}, {conns, reqs}, {conns, reqs + extra}} {
			out := filepath.Join(tmp, fmt.Sprintf("%s-%d.out", fw, i))
			if c[i], err = measure(bin, fw, out, r.conns, r.reqs, port); err != nil {
				return fmt.Errorf("%s: %w", fw, err)
			}
			fmt.Fprintf(os.Stderr, "conncount: %s, %d connections × %d requests: %.0f instructions (stack growth %.0f)\n",
				fw, r.conns, r.reqs, c[i].total, c[i].stack)
		}
		per := func(f func(count) float64) (conn, req float64) {
			req = (f(c[2]) - f(c[1])) / float64(conns*extra)
			conn = (f(c[1])-f(c[0]))/float64(conns-few) - float64(reqs)*req
			return conn, req
		}
		var r row
		r.conn.total, r.req.total = per(func(c count) float64 { return c.total })
		r.conn.stack, r.req.stack = per(func(c count) float64 { return c.stack })
		rows[fw] = r
	}
	fmt.Printf("\nInstructions counted by cachegrind in the server process: %d and %d connections × %d requests,\n", few, conns, reqs)
	fmt.Printf("%d connections × %d requests (GET /hello over 127.0.0.1; GOGC=off, GOMAXPROCS=1).\n\n", conns, reqs+extra)
	fmt.Println("| framework | per connection | of which stack growth | per request | of which stack growth |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, fw := range fws {
		r := rows[fw]
		name := fw
		if fw == "fx" {
			name = "**fx**"
		}
		fmt.Printf("| %s | %.0f | %.0f | %.0f | %.0f |\n", name, r.conn.total, r.conn.stack, r.req.total, r.req.stack)
	}
	return nil
}

// measure runs one server under cachegrind, drives it with conns
// connections of reqs requests each, stops it and reads the count.
func measure(bin, fw, out string, conns, reqs, port int) (count, error) {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command("valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file="+out,
		bin, "-fw", fw, "-addr", addr)
	// cpu.rdtscp=off: valgrind does not know RDTSCP, which the runtime's
	// contended locks read the cycle counter with.
	cmd.Env = append(os.Environ(), "GOGC=off", "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return count{}, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	if err := serverproc.WaitReady(300, "http://"+addr+"/hello"); err != nil { // a server starts slowly under valgrind
		return count{}, err
	}
	if err := drive(addr, conns, reqs); err != nil {
		return count{}, err
	}
	_ = cmd.Process.Signal(syscall.SIGTERM) // cachegrind writes its file as the process ends
	_ = cmd.Wait()
	stopped = true
	return readCount(out)
}

// drive opens conns connections to addr, then sends reqs GET /hello on
// each, one after another, all connections at once.
func drive(addr string, conns, reqs int) error {
	cs := make([]net.Conn, 0, conns)
	defer func() {
		for _, c := range cs {
			c.Close()
		}
	}()
	for range conns {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			return err
		}
		cs = append(cs, c)
	}
	errs := make(chan error, conns)
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() { errs <- exchange(c, reqs) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func exchange(c net.Conn, reqs int) error {
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	br := bufio.NewReader(c)
	for range reqs {
		if err := serverproc.GetHello(c, br); err != nil {
			return err
		}
	}
	return nil
}

// stackGrowth are the runtime functions a stack's growth runs: the copy,
// and the decoding of each frame's position tables (pcvalue's walk).
var stackGrowth = map[string]bool{
	"runtime.newstack": true, "runtime.copystack": true, "runtime.adjustframe": true,
	"runtime.adjustpointers": true, "runtime.step": true, "runtime.pcvalue": true,
	"runtime.(*moduledata).textAddr": true, "runtime.funcMaxSPDelta": true,
	"runtime.(*stkframe).getStackMap": true, "runtime.(*stkframe).argMapInternal": true,
	"runtime.(*unwinder).next": true, "runtime.(*unwinder).resolveInternal": true,
}

// readCount sums a cachegrind output file's instruction counts ("fn="
// blocks of "line count" rows), in all and in stackGrowth's functions.
func readCount(path string) (count, error) {
	f, err := os.Open(path)
	if err != nil {
		return count{}, err
	}
	defer f.Close()
	var c count
	inStack := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if fn, ok := strings.CutPrefix(line, "fn="); ok {
			inStack = stackGrowth[fn]
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 || line[0] < '0' || line[0] > '9' {
			continue
		}
		n, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			continue
		}
		c.total += n
		if inStack {
			c.stack += n
		}
	}
	if err := sc.Err(); err != nil {
		return count{}, err
	}
	if c.total == 0 {
		return count{}, errors.New("no counts in " + path + " (did valgrind run?)")
	}
	return c, nil
}
