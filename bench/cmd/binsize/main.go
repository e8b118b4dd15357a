// Command binsize builds the hello-world programs under hello/ (one route
// answering JSON, in fx, fx as a typed operation with its OpenAPI document,
// raw fasthttp, Fiber v2, Echo v5 and Huma v2) and prints a Markdown table:
// each binary's size as `go build` writes it and stripped of its symbol
// table and debug information (-ldflags='-s -w'), how many modules it
// links (`go version -m`), and the modules whose linked symbols weigh the
// most (`go tool nm -size`, BSS left out).
//
//	cd bench && go run ./cmd/binsize
package main

import (
	"cmp"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

var programs = []string{"fasthttp", "fx", "fxtyped", "fiber", "echo", "huma"}

func main() {
	dir, err := os.MkdirTemp("", "binsize-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fmt.Println("| program | go build | -ldflags='-s -w' | modules linked | heaviest modules linked (symbols) |")
	fmt.Println("|---|---:|---:|---:|---|")
	for _, p := range programs {
		bin := filepath.Join(dir, p)
		build(bin, "./cmd/binsize/hello/"+p)
		full := size(bin)
		build(bin+"-s", "-ldflags=-s -w", "./cmd/binsize/hello/"+p)
		mods, heavy := linked(bin)
		fmt.Printf("| %s | %.1f MiB | %.1f MiB | %d | %s |\n", p, mib(full), mib(size(bin+"-s")), len(mods), heavy)
	}
}

func build(out string, args ...string) {
	cmd := exec.Command("go", append([]string{"build", "-o", out}, args...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("go build %v: %v", args, err)
	}
}

func size(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		log.Fatal(err)
	}
	return st.Size()
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func output(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		log.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out)
}

// linked returns the modules bin was built with and its four heaviest
// ones, the standard library aside, as "path 123 KiB, ...".
func linked(bin string) ([]string, string) {
	var mods []string
	for _, line := range strings.Split(output("go", "version", "-m", bin), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "dep" {
			mods = append(mods, f[1])
		}
	}
	bytes := map[string]int{}
	for _, line := range strings.Split(output("go", "tool", "nm", "-size", bin), "\n") {
		f := strings.Fields(line) // address size type name
		if len(f) < 4 || f[2] == "B" || f[2] == "b" {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		name := strings.TrimPrefix(strings.TrimPrefix(f[3], "type:"), "*")
		owner := ""
		for _, m := range mods {
			if (strings.HasPrefix(name, m+".") || strings.HasPrefix(name, m+"/")) && len(m) > len(owner) {
				owner = m
			}
		}
		if owner != "" {
			bytes[owner] += n
		}
	}
	slices.SortFunc(mods, func(a, b string) int { return cmp.Compare(bytes[b], bytes[a]) })
	var top []string
	for _, m := range mods[:min(4, len(mods))] {
		top = append(top, fmt.Sprintf("%s %d KiB", strings.TrimPrefix(m, "github.com/"), bytes[m]>>10))
	}
	return mods, strings.Join(top, ", ")
}
