// Command modproxy serves the modules of this repository from the file
// system, the way a module proxy would serve a release, so that releasing
// and tidiness can be checked without publishing anything.
//
// The nested modules require the root module (and each other) at a real
// version, and a committed go.work makes those requirements local while
// developing. Two commands cannot use go.work: `go mod tidy`, which always
// works on one module, and a user's `go get` from outside the repository.
// modproxy gives both a proxy (GOPROXY=file://DIR) holding every module of
// the repository at the version the modules require of each other.
//
// Usage:
//
//	modproxy version                  print the version the modules require of each other
//	modproxy setversion V             make every module require the others at V, and
//	                                  go.work map V of each required module to its folder
//	modproxy build -o DIR [-rev REV] [-version V]
//	                                  write a file proxy of every module (the working
//	                                  tree's tracked and unignored files, or `git archive REV`)
//	modproxy env [-proxy DIR]         print `export KEY=VALUE` lines (for eval in a shell)
//	                                  in which the go command, anywhere outside the
//	                                  repository, reads the repository's modules from the
//	                                  file proxy DIR, with a module cache of DIR's own;
//	                                  without -proxy it first builds a proxy of the working
//	                                  tree in the user's cache directory
//	modproxy tidy [-write] [-strict]  run `go mod tidy -diff` (or `go mod tidy` with -write)
//	                                  in every module against a proxy of the working tree
//
// Every command runs from anywhere inside the repository. tidy ignores the
// go.sum lines of the repository's own modules unless -strict is given:
// their hashes are those of the last release (written by
// scripts/release.sh), not of the working tree.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "version":
		err = runVersion(os.Args[2:])
	case "setversion":
		err = runSetVersion(os.Args[2:])
	case "build":
		err = runBuild(os.Args[2:])
	case "tidy":
		err = runTidy(os.Args[2:])
	case "env":
		err = runEnv(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: modproxy version | setversion V | build -o DIR [-rev REV] [-version V] | env [-proxy DIR] | tidy [-write] [-strict]")
	os.Exit(2)
}

func runBuild(args []string) error {
	fs := flag.NewFlagSet("build", flag.ExitOnError)
	out := fs.String("o", "", "directory to write the proxy into (created; existing versions are kept)")
	rev := fs.String("rev", "", "git revision to archive; empty means the working tree")
	version := fs.String("version", "", "version to serve every module at; empty means the one the modules require of each other")
	fs.Parse(args)
	if *out == "" {
		return fmt.Errorf("build: -o DIR is required")
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	_, err = buildProxy(root, *rev, *version, *out)
	return err
}

// runEnv prints the environment of a consumer outside the repository (see
// consumerEnv) as `export` lines a POSIX shell evaluates:
//
//	eval "$(go run ./scripts/modproxy env)"
//
// Without -proxy it builds a proxy of the working tree first, into
// defaultProxyDir, and says so on standard error.
func runEnv(args []string) error {
	fs := flag.NewFlagSet("env", flag.ExitOnError)
	proxy := fs.String("proxy", "", "the file proxy directory; empty: build one of the working tree in the user's cache directory")
	fs.Parse(args)
	root, mods, err := repoModules()
	if err != nil {
		return err
	}
	dir := *proxy
	if dir == "" {
		if dir, err = defaultProxyDir(root); err != nil {
			return err
		}
		version, err := buildProxy(root, "", "", dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "modproxy: %d modules of %s served at %s from %s\n", len(mods), root, version, dir)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	env, err := consumerEnv(dir, mods[0].Path)
	if err != nil {
		return err
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Printf("export %s=%s\n", k, shellQuote(v))
	}
	return nil
}

// shellQuote quotes s for a POSIX shell: in single quotes, a single quote
// written as '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
