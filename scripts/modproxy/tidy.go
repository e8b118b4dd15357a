package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/mod/module"
)

// clearOwn removes the repository's modules (rootPath and below) from the
// module cache in dir, extracted and downloaded.
func clearOwn(dir, rootPath string) error {
	esc, err := module.EscapePath(rootPath)
	if err != nil {
		return err
	}
	stale, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(esc)+"@*"))
	stale = append(stale,
		filepath.Join(dir, filepath.FromSlash(esc)),
		filepath.Join(dir, "cache", "download", filepath.FromSlash(esc)))
	for _, p := range stale {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("clearing the isolated module cache: %w", err)
		}
	}
	return nil
}

// runTidy checks (or, with -write, makes) every module of the repository
// tidy. `go mod tidy` ignores go.work, so each module is tidied on its own
// (GOWORK=off) against a file proxy of the working tree that serves the
// repository's modules at the version they require of each other; other
// modules come from the local module cache, then from the machine's
// GOPROXY. The served versions never reach the real module cache (see
// modproxyCache).
func runTidy(args []string) error {
	fs := flag.NewFlagSet("tidy", flag.ExitOnError)
	write := fs.Bool("write", false, "run go mod tidy (rewriting go.mod and go.sum) instead of go mod tidy -diff")
	strict := fs.Bool("strict", false, "keep (with -write) or compare the go.sum lines of the repository's own modules")
	fs.Parse(args)
	root, err := repoRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "modproxy-tidy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// A changed go.mod or go.sum changes what the proxy serves (and the
	// hashes) to the modules that require it: tidy again until nothing moves.
	for round := 0; ; round++ {
		moved, err := tidyRound(root, tmp, round, *write, *strict)
		if err != nil || !moved {
			return err
		}
		if round == 3 {
			return errors.New("go.mod files still change after 4 rounds of go mod tidy")
		}
	}
}

// tidyRound runs go mod tidy once in every module and reports whether a
// go.mod or go.sum changed.
func tidyRound(root, tmp string, round int, write, strict bool) (moved bool, err error) {
	mods, err := findModules(root)
	if err != nil {
		return false, err
	}
	proxy := fmt.Sprintf("%s/proxy%d", tmp, round)
	if _, err := buildProxy(root, "", "", proxy); err != nil {
		return false, err
	}
	modcache, err := modproxyCache(root, mods[0].Path)
	if err != nil {
		return false, err
	}
	env, err := isolatedEnv(proxy, mods[0].Path, modcache)
	if err != nil {
		return false, err
	}
	env = append(os.Environ(), env...)
	var failed []string
	for _, m := range mods {
		if write {
			sumBefore, _ := os.ReadFile(m.Dir + "/go.sum")
			// The hashes of the repository's own modules are those of this
			// round's proxy, never of an earlier one: go mod tidy would
			// refuse a mismatch as a security error.
			if err := dropOwnSums(m.Dir+"/go.sum", mods[0].Path); err != nil {
				return false, err
			}
			cmd := exec.Command("go", "mod", "tidy")
			cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = m.Dir, env, os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				return false, fmt.Errorf("%s: go mod tidy: %w", m.Rel, err)
			}
			if !strict {
				if err := dropOwnSums(m.Dir+"/go.sum", mods[0].Path); err != nil {
					return false, err
				}
			}
			modAfter, err := os.ReadFile(m.Dir + "/go.mod")
			if err != nil {
				return false, err
			}
			sumAfter, _ := os.ReadFile(m.Dir + "/go.sum")
			moved = moved || !bytes.Equal(modAfter, m.Data) || !bytes.Equal(sumAfter, sumBefore)
			continue
		}
		var stdout, stderr bytes.Buffer
		cmd := exec.Command("go", "mod", "tidy", "-diff")
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = m.Dir, env, &stdout, &stderr
		err := cmd.Run()
		if err != nil && stdout.Len() == 0 {
			return false, fmt.Errorf("%s: go mod tidy -diff: %w\n%s", m.Rel, err, stderr.String())
		}
		if d := relevantDiff(stdout.String(), mods[0].Path, strict); d != "" {
			failed = append(failed, fmt.Sprintf("%s: go mod tidy would change:\n%s", m.Rel, d))
		}
	}
	if len(failed) > 0 {
		return false, errors.New(strings.Join(failed, "\n"))
	}
	return moved, nil
}

// relevantDiff keeps the changed lines of a `go mod tidy -diff` output,
// without the go.sum lines of the repository's own modules (whose path
// begins with rootPath) unless strict. Those lines hold the hashes of the
// last release, which the working tree is not.
func relevantDiff(diff, rootPath string, strict bool) string {
	own := ownSumLine(rootPath)
	var keep []string
	for _, line := range strings.Split(diff, "\n") {
		if !strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "-") ||
			strings.HasPrefix(line, "+++") || strings.HasPrefix(line, "---") {
			continue
		}
		if !strict && own.MatchString(line) {
			continue
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "\n")
}

// dropOwnSums removes from a go.sum the lines of the repository's own
// modules: between releases they would hold hashes of a working tree that
// no proxy serves.
func dropOwnSums(path, rootPath string) error {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	own := ownSumLine(rootPath)
	var keep []string
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if !own.MatchString("+" + line) {
			keep = append(keep, line)
		}
	}
	return os.WriteFile(path, []byte(strings.Join(keep, "")), 0o644)
}

// ownSumLine matches a diff line adding or removing a go.sum line of one of
// the repository's modules (rootPath or a path below it).
func ownSumLine(rootPath string) *regexp.Regexp {
	return regexp.MustCompile(`^[-+]` + regexp.QuoteMeta(rootPath) + `(/\S+)? v\S+ h1:`)
}

// isolatedEnv is the environment (to add to the current one) in which the go command resolves the
// repository's modules (rootPath and below) from the file proxy in dir,
// never from the network or the checksum database, with modcache as its
// module cache, never the real one. Third-party modules come from the real
// module cache's download cache, then from the machine's GOPROXY.
func isolatedEnv(dir, rootPath, modcache string) ([]string, error) {
	out, err := exec.Command("go", "env", "-json", "GOPROXY", "GOMODCACHE", "GOFLAGS", "GONOSUMDB").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	var goenv struct{ GOPROXY, GOMODCACHE, GOFLAGS, GONOSUMDB string }
	if err := json.Unmarshal(out, &goenv); err != nil {
		return nil, err
	}
	proxy := "file://" + dir + ",file://" + goenv.GOMODCACHE + "/cache/download"
	if goenv.GOPROXY != "" && goenv.GOPROXY != "off" {
		proxy += "," + goenv.GOPROXY
	}
	nosum := rootPath
	if goenv.GONOSUMDB != "" {
		nosum = goenv.GONOSUMDB + "," + rootPath
	}
	// Run again in a shell that holds an earlier run's exports, the lists
	// would repeat what that run added: each entry is kept once, first.
	proxy, nosum = uniqueList(proxy, ","), uniqueList(nosum, ",")
	goenv.GOFLAGS = uniqueList(goenv.GOFLAGS+" -modcacherw", " ")
	return []string{
		// The go command indexes each module of the module cache once, in
		// GOCACHE, keyed by its directory: the repository's modules change
		// under one version and one directory, so an index from an earlier
		// run would hide the packages added since ("module ... does not
		// contain package"). goindex=0 reads the directories every time.
		"GODEBUG=goindex=0",
		"GOWORK=off",
		"GOPROXY=" + proxy,
		"GONOSUMDB=" + nosum,
		"GOMODCACHE=" + modcache,
		"GOFLAGS=" + goenv.GOFLAGS,
	}, nil
}

// uniqueList returns the list s (items separated by sep; empty items
// dropped) with each item kept once, at its first place.
func uniqueList(s, sep string) string {
	var out []string
	for _, item := range strings.Split(s, sep) {
		if item = strings.TrimSpace(item); item != "" && !slices.Contains(out, item) {
			out = append(out, item)
		}
	}
	return strings.Join(out, sep)
}

// consumerEnv is the environment of a module outside the repository that
// uses the repository's modules as a user would once they are published
// (go get github.com/fxhq/fx@VERSION), served by the file proxy in dir:
// isolatedEnv with the module cache of dir (proxyCache) and -mod=mod, so
// that go build and go run add a missing requirement to go.mod as go get
// would.
func consumerEnv(dir, rootPath string) ([]string, error) {
	modcache, err := proxyCache(dir, rootPath)
	if err != nil {
		return nil, err
	}
	env, err := isolatedEnv(dir, rootPath, modcache)
	if err != nil {
		return nil, err
	}
	for i, kv := range env {
		if flags, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			env[i] = "GOFLAGS=" + uniqueList(flags+" -mod=mod", " ")
		}
	}
	return env, nil
}
