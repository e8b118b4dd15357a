// Command table runs the in-process benchmarks of the bench module (go test
// -run '^$' -bench '^Benchmark(Service|Typed)$' -benchmem, -count times in
// separate passes over all of them: see runBenchmarks) and prints one
// Markdown table: ns/op, B/op, allocs/op and the ratio of ns/op to raw
// fasthttp, per endpoint and framework, followed by fx's performance
// targets checked against that same run.
//
// Usage, from the repository root or from bench/:
//
//	go run ./bench/cmd/table                # or, in bench/: go run ./cmd/table
//	go run ./cmd/table -count 3             # median of three passes per benchmark
//	go run ./cmd/table -count 5 -stat min   # fastest of five: steadier on a busy machine
//	go run ./cmd/table -in bench.out        # tabulate output saved earlier
//	go run ./cmd/table -out bench.out       # also keep go test's raw output
//
// Absolute ns/op depend on the machine and its load; compare the ratios of
// one run.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

const (
	module   = "github.com/fxhq/fx/bench"
	baseline = "raw-fasthttp"
)

func main() {
	count := flag.Int("count", 1, "runs per benchmark, each in its own pass over all of them (see -stat)")
	flag.StringVar(&stat, "stat", "median", "with -count > 1, show the median or the min of the runs (min is the steadier estimate on a busy machine: noise only adds time)")
	benchtime := flag.String("benchtime", "", "go test -benchtime (default: go test's)")
	filter := flag.String("bench", "", "only benchmarks whose <endpoint>/<framework> name matches this regexp (typed-*: the typed endpoint)")
	in := flag.String("in", "", "read go test -bench output from this file instead of running the benchmarks")
	out := flag.String("out", "", "also write go test's raw output to this file")
	flag.Parse()

	var raw []byte
	var err error
	if *in != "" {
		raw, err = os.ReadFile(*in)
	} else {
		raw, err = runBenchmarks(*count, *benchtime, *filter)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		os.Exit(1)
	}
	if *out != "" {
		if err := os.WriteFile(*out, raw, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "table:", err)
			os.Exit(1)
		}
	}
	res := parse(raw)
	if len(res.order) == 0 {
		fmt.Fprintln(os.Stderr, "table: no BenchmarkService or BenchmarkTyped results found")
		os.Exit(1)
	}
	if stat != "median" && stat != "min" {
		fmt.Fprintln(os.Stderr, "table: -stat must be median or min")
		os.Exit(2)
	}
	printTable(os.Stdout, res)
	printTargets(os.Stdout, res)
}

// runBenchmarks compiles the bench module's tests once and runs every
// benchmark count times, one pass over all of them at a time, echoing the
// output to stderr as it comes. Passes, not go test -count: -count runs
// one benchmark's samples back to back, so a slow spell of the machine
// (a VM's speed drifts by ±20% over minutes) can cover all the samples of
// one framework and none of another's, and -stat min cannot recover from
// it. With passes, each benchmark's samples are minutes apart, and those
// of the frameworks compared for one endpoint are always taken close
// together.
func runBenchmarks(count int, benchtime, filter string) ([]byte, error) {
	dir, err := findModule()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "table")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "bench.test")
	fmt.Fprintf(os.Stderr, "table: (cd %s && go test -c -o %s .)\n", dir, bin)
	build := exec.Command("go", "test", "-c", "-o", bin, ".")
	build.Dir, build.Stdout, build.Stderr = dir, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("go test -c: %w", err)
	}
	bench := "^Benchmark(Service|Typed)$"
	if filter != "" {
		bench = "^Benchmark(Service|Typed)$/" + filter
	}
	args := []string{"-test.run", "^$", "-test.bench", bench, "-test.benchmem", "-test.count", "1"}
	if benchtime != "" {
		args = append(args, "-test.benchtime", benchtime)
	}
	var buf bytes.Buffer
	for pass := 1; pass <= max(count, 1); pass++ {
		fmt.Fprintf(os.Stderr, "table: pass %d of %d: %s %s\n", pass, max(count, 1), bin, strings.Join(args, " "))
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Stdout = io.MultiWriter(&buf, os.Stderr)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("pass %d: %w", pass, err)
		}
	}
	return buf.Bytes(), nil
}

// findModule finds the bench module from the working directory: the
// directory itself or an ancestor, or a bench/ directory beside them.
func findModule() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		for _, d := range []string{dir, filepath.Join(dir, "bench")} {
			if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil &&
				regexp.MustCompile(`(?m)^module\s+`+regexp.QuoteMeta(module)+`\s*$`).Match(b) {
				return d, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the bench module (" + module + "); run from the repository or from bench/")
		}
		dir = parent
	}
}

var stat = "median"

type sample struct{ ns, bytes, allocs float64 }

type results struct {
	order      []string // endpoints in first-seen order
	frameworks map[string][]string
	samples    map[string][]sample // key endpoint/framework
	header     []string            // goos, goarch, cpu lines
}

var lineRE = regexp.MustCompile(`^Benchmark(?:Service|Typed)/([^/\s]+)/(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(?:\s+([\d.]+) B/op\s+([\d.]+) allocs/op)?`)

func parse(raw []byte) results {
	res := results{frameworks: map[string][]string{}, samples: map[string][]sample{}}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "cpu:") || strings.HasPrefix(line, "goos:") || strings.HasPrefix(line, "goarch:") {
			if !slices.Contains(res.header, line) {
				res.header = append(res.header, line)
			}
			continue
		}
		m := lineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ep, fw := m[1], m[2]
		if _, ok := res.frameworks[ep]; !ok {
			res.order = append(res.order, ep)
		}
		if !slices.Contains(res.frameworks[ep], fw) {
			res.frameworks[ep] = append(res.frameworks[ep], fw)
		}
		s := sample{ns: num(m[3]), bytes: num(m[4]), allocs: num(m[5])}
		res.samples[ep+"/"+fw] = append(res.samples[ep+"/"+fw], s)
	}
	return res
}

func num(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// get returns the median sample of endpoint/framework.
func (r results) get(ep, fw string) (sample, bool) {
	ss := r.samples[ep+"/"+fw]
	if len(ss) == 0 {
		return sample{}, false
	}
	var ns, b, a []float64
	for _, s := range ss {
		ns, b, a = append(ns, s.ns), append(b, s.bytes), append(a, s.allocs)
	}
	pick := median
	if stat == "min" {
		pick = func(xs []float64) float64 { return slices.Min(xs) }
	}
	return sample{pick(ns), pick(b), pick(a)}, true
}

func printTable(w io.Writer, r results) {
	for _, h := range r.header {
		fmt.Fprintln(w, h)
	}
	if len(r.header) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "| endpoint | framework | ns/op | B/op | allocs/op | × raw fasthttp |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|")
	for _, ep := range r.order {
		base, hasBase := r.get(ep, baseline)
		for _, fw := range r.frameworks[ep] {
			s, _ := r.get(ep, fw)
			ratio := "–"
			if hasBase && base.ns > 0 {
				ratio = fmt.Sprintf("%.2f", s.ns/base.ns)
			}
			name := fw
			if fw == "fx" {
				name = "**fx**"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", ep, name, fmtNum(s.ns), fmtNum(s.bytes), fmtNum(s.allocs), ratio)
		}
	}
}

// faster states a speed-up target: "≥ 2×", or "> 1×" (strictly faster).
func faster(min float64) string {
	if min > 1 {
		return "≥ " + fmtNum(min) + "×"
	}
	return "> 1×"
}

func fmtNum(f float64) string {
	if f >= 100 || f == float64(int64(f)) {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}

// printTargets checks fx's performance targets against this run: the
// ratios to raw fasthttp and to Fiber v3, and allocation counts.
func printTargets(w io.Writer, r results) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Targets (this run):")
	ratio := func(ep, a, b string) (float64, bool) {
		x, ok1 := r.get(ep, a)
		y, ok2 := r.get(ep, b)
		if !ok1 || !ok2 || y.ns == 0 {
			return 0, false
		}
		return x.ns / y.ns, true
	}
	report := func(ok bool, format string, args ...any) {
		mark := "MISS"
		if ok {
			mark = "ok  "
		}
		fmt.Fprintf(w, "- %s %s\n", mark, fmt.Sprintf(format, args...))
	}
	for _, t := range []struct {
		ep  string
		max float64
	}{{"hello", 1.15}, {"not-found", 1.15}, {"user-error", 1.15}, {"error-var", 1.15}, {"panic", 1.3}, {"hello-mw5", 1.6}} {
		if x, ok := ratio(t.ep, "fx", baseline); ok {
			report(x <= t.max, "%s: fx %.2f× raw fasthttp (target ≤ %.2f×)", t.ep, x, t.max)
		}
	}
	for _, t := range []struct {
		ep  string
		min float64
	}{{"not-found", 2}, {"panic", 2}, {"hello-mw5", 1}} {
		if x, ok := ratio(t.ep, "fiber-v3", "fx"); ok {
			ok := x >= t.min
			if t.min == 1 {
				ok = x > 1 // strictly faster
			}
			report(ok, "%s: fx %.2f× faster than fiber-v3 (target %s)", t.ep, x, faster(t.min))
		}
	}
	for _, t := range []struct {
		ep  string
		max float64
	}{{"not-found", 0}, {"error-var", 0}, {"user-error", 0}, {"hello", 1}} {
		if s, ok := r.get(t.ep, "fx"); ok {
			report(s.allocs <= t.max, "%s: fx %s allocs/op (target ≤ %s)", t.ep, fmtNum(s.allocs), fmtNum(t.max))
		}
	}
	if fx, ok := r.get("orders-422", "fx"); ok {
		fewest, who := fx.allocs, "fx"
		for _, fw := range r.frameworks["orders-422"] {
			if s, _ := r.get("orders-422", fw); fw != "fx" && fw != baseline && s.allocs <= fewest {
				fewest, who = s.allocs, fw
			}
		}
		report(who == "fx", "orders-422: fx %s allocs/op, fewest of the frameworks: %s (%s)", fmtNum(fx.allocs), who, fmtNum(fewest))
	}
	printTypedTargets(report, r)
}

// printTypedTargets checks the typed endpoint's targets (BenchmarkTyped):
// on a valid body fx within 1.3× of the hand-written handler, with the
// fewest allocations of the frameworks and at least 3× faster than Huma;
// on the 422 path faster than every peer.
func printTypedTargets(report func(ok bool, format string, args ...any), r results) {
	const valid, invalid = "typed-valid", "typed-422"
	if fx, ok := r.get(valid, "fx"); ok {
		if raw, ok := r.get(valid, baseline); ok && raw.ns > 0 {
			report(fx.ns/raw.ns <= 1.3, "%s: fx %.2f× the hand-written handler (target ≤ 1.30×)", valid, fx.ns/raw.ns)
		}
		if h, ok := r.get(valid, "huma"); ok && fx.ns > 0 {
			report(h.ns/fx.ns >= 3, "%s: fx %.2f× faster than huma (target ≥ 3×)", valid, h.ns/fx.ns)
		}
		fewest, who := fx.allocs, "fx"
		for _, fw := range r.frameworks[valid] {
			if s, _ := r.get(valid, fw); fw != "fx" && fw != baseline && s.allocs <= fewest {
				fewest, who = s.allocs, fw
			}
		}
		report(who == "fx", "%s: fx %s allocs/op, fewest of the frameworks: %s (%s)", valid, fmtNum(fx.allocs), who, fmtNum(fewest))
	}
	if fx, ok := r.get(invalid, "fx"); ok {
		for _, fw := range r.frameworks[invalid] {
			if s, _ := r.get(invalid, fw); fw != "fx" && fw != baseline && fx.ns > 0 {
				report(s.ns/fx.ns > 1, "%s: fx %.2f× faster than %s (target > 1×)", invalid, s.ns/fx.ns, fw)
			}
		}
	}
}
