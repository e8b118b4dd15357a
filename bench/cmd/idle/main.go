// Command idle measures what an idle keep-alive connection costs each
// server of cmd/server: the memory a connection holds while it waits for
// its next request, which is what thousands of quiet clients (mobile
// apps, long-polling dashboards, a load balancer's pooled connections)
// cost a service. scale.sh measures the peak under load instead; there
// every connection is busy.
//
// For each round and each framework (in a rotated order), it starts a
// fresh server (cmd/server, built once) on 127.0.0.1 with its pprof
// endpoint on, opens -conns connections, sends one GET /hello on each,
// reads the answer and keeps the connection open and silent. Before and
// after, it asks the server for a garbage collection and its
// runtime.MemStats (/debug/pprof/heap?gc=1&debug=1: the collection shrinks
// the idle goroutines' stacks, as the runtime's periodic one would on a
// quiet server) and reads its VmRSS. Per connection it reports the growth
// of heap and stack in use, and of RSS.
//
// Usage, in bench/:
//
//	go run ./cmd/idle                                  # raw fasthttp, fx, Fiber v3; 2,000 connections, 3 rounds
//	go run ./cmd/idle -conns 5000 -rounds 5 -fw "fx fiber-v3"
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
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fxhq/fx/bench/cmd/internal/serverproc"
)

func main() {
	fws := flag.String("fw", "raw-fasthttp fx fiber-v3", "frameworks (cmd/server -fw names), space-separated")
	conns := flag.Int("conns", 2000, "idle keep-alive connections per server")
	rounds := flag.Int("rounds", 3, "rounds (medians are reported)")
	port := flag.Int("port", 18190, "the server listens on 127.0.0.1:port, its pprof endpoint on port+1")
	flag.Parse()
	if err := run(strings.Fields(*fws), *conns, *rounds, *port); err != nil {
		fmt.Fprintln(os.Stderr, "idle:", err)
		os.Exit(1)
	}
}

// sample is one server's growth per idle connection, in bytes.
type sample struct{ heap, stack, rss float64 }

func run(fws []string, conns, rounds, port int) error {
	if len(fws) == 0 || conns < 1 || rounds < 1 {
		return errors.New("need at least one framework, connection and round")
	}
	tmp, err := os.MkdirTemp("", "idle")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, err := serverproc.Build(tmp)
	if err != nil {
		return err
	}
	results := map[string][]sample{}
	for r := range rounds {
		for i := range fws {
			fw := fws[(i+r)%len(fws)]
			s, err := measure(bin, fw, conns, port)
			if err != nil {
				return fmt.Errorf("%s: %w", fw, err)
			}
			fmt.Fprintf(os.Stderr, "idle: round %d %s: heap %.0f B, stack %.0f B, RSS %.0f B per connection\n",
				r+1, fw, s.heap, s.stack, s.rss)
			results[fw] = append(results[fw], s)
		}
	}
	fmt.Printf("\nMedians of %d rounds, %d idle keep-alive connections each, after one GET /hello per connection\n", rounds, conns)
	fmt.Printf("and a garbage collection (KiB per connection; heap and stack from runtime.MemStats, RSS from /proc).\n\n")
	fmt.Println("| framework | heap | stack | heap + stack | RSS |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, fw := range fws {
		ss := results[fw]
		h := median(ss, func(s sample) float64 { return s.heap })
		st := median(ss, func(s sample) float64 { return s.stack })
		hs := median(ss, func(s sample) float64 { return s.heap + s.stack })
		rss := median(ss, func(s sample) float64 { return s.rss })
		name := fw
		if fw == "fx" {
			name = "**fx**"
		}
		fmt.Printf("| %s | %.1f | %.1f | %.1f | %.1f |\n", name, h/1024, st/1024, hs/1024, rss/1024)
	}
	return nil
}

// measure starts one server and returns what each idle connection added.
func measure(bin, fw string, conns, port int) (sample, error) {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	pprof := "127.0.0.1:" + strconv.Itoa(port+1)
	cmd := exec.Command(bin, "-fw", fw, "-addr", addr)
	cmd.Env = append(os.Environ(), "FX_BENCH_PPROF="+pprof, "FX_BENCH_PPROF_CPU_ONLY=1")
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	if err := serverproc.WaitReady(100, "http://"+addr+"/hello", "http://"+pprof+"/debug/pprof/"); err != nil {
		return sample{}, err
	}
	before, err := stats(pprof, cmd.Process.Pid)
	if err != nil {
		return sample{}, err
	}
	idle, err := openIdle(addr, conns)
	defer closeAll(idle)
	if err != nil {
		return sample{}, err
	}
	time.Sleep(time.Second)
	after, err := stats(pprof, cmd.Process.Pid)
	if err != nil {
		return sample{}, err
	}
	n := float64(conns)
	return sample{
		heap:  (after.heap - before.heap) / n,
		stack: (after.stack - before.stack) / n,
		rss:   (after.rss - before.rss) / n,
	}, nil
}

// openIdle opens n connections to addr, each answered once, and leaves
// them open.
func openIdle(addr string, n int) ([]net.Conn, error) {
	cs := make([]net.Conn, 0, n)
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return cs, err
		}
		cs = append(cs, c)
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if err := serverproc.GetHello(c, bufio.NewReader(c)); err != nil {
			return cs, err
		}
		_ = c.SetDeadline(time.Time{})
	}
	return cs, nil
}

func closeAll(cs []net.Conn) {
	for _, c := range cs {
		c.Close()
	}
}

type memStats struct{ heap, stack, rss float64 }

var statRE = regexp.MustCompile(`(?m)^# (HeapInuse|Stack) = (\d+)`) // "# Stack = inuse / sys"

// stats collects garbage in the server and returns its heap and stack in
// use and its resident set.
func stats(pprof string, pid int) (memStats, error) {
	resp, err := http.Get("http://" + pprof + "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return memStats{}, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	if err != nil {
		return memStats{}, err
	}
	var m memStats
	found := 0
	for _, sm := range statRE.FindAllStringSubmatch(string(body), -1) {
		v, _ := strconv.ParseFloat(sm[2], 64)
		switch sm[1] {
		case "HeapInuse":
			m.heap, found = v, found+1
		case "Stack":
			m.stack, found = v, found+1
		}
	}
	if found != 2 {
		return memStats{}, errors.New("no MemStats in the heap profile")
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return memStats{}, err
	}
	for line := range strings.Lines(string(status)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			m.rss = kb * 1024
		}
	}
	return m, nil
}

func median(ss []sample, f func(sample) float64) float64 {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
