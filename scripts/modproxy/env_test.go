package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestConsumerEnv: the environment modproxy env prints has everything a
// module outside the repository needs (no workspace, the proxy first, no
// checksum database for the repository's modules, -mod=mod), and each
// proxy directory has a module cache of its own, which clearing one
// proxy's leaves the other's alone.
func TestConsumerEnv(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	const root = "example.com/r"
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, p := range []string{a, b} { // the proxies exist (a folder's cache goes with it)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	envA, err := consumerEnv(a, root)
	if err != nil {
		t.Fatal(err)
	}
	get := func(env []string, key string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, key+"="); ok {
				return v
			}
		}
		t.Fatalf("no %s in %q", key, env)
		return ""
	}
	if v := get(envA, "GOWORK"); v != "off" {
		t.Errorf("GOWORK=%s", v)
	}
	if v := get(envA, "GOPROXY"); !strings.HasPrefix(v, "file://"+a+",") {
		t.Errorf("GOPROXY=%s does not start with the proxy", v)
	}
	if v := get(envA, "GONOSUMDB"); !slices.Contains(strings.Split(v, ","), root) {
		t.Errorf("GONOSUMDB=%s", v)
	}
	if v := strings.Fields(get(envA, "GOFLAGS")); !slices.Contains(v, "-mod=mod") || !slices.Contains(v, "-modcacherw") {
		t.Errorf("GOFLAGS=%s", v)
	}
	envB, err := consumerEnv(b, root)
	if err != nil {
		t.Fatal(err)
	}
	cacheA, cacheB := get(envA, "GOMODCACHE"), get(envB, "GOMODCACHE")
	if cacheA == cacheB {
		t.Fatalf("two proxies share the module cache %s", cacheA)
	}
	if real, _ := exec.Command("go", "env", "GOMODCACHE").Output(); strings.TrimSpace(string(real)) == cacheA {
		t.Fatalf("GOMODCACHE is the real module cache %s", cacheA)
	}
	// The repository's modules extracted in each cache: a new env for a
	// clears a's copy (a may have been rebuilt), never b's.
	for _, c := range []string{cacheA, cacheB} {
		if err := os.MkdirAll(filepath.Join(c, "example.com", "r@v0.1.0"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := consumerEnv(a, root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cacheA, "example.com", "r@v0.1.0")); !os.IsNotExist(err) {
		t.Errorf("a's stale copy of the module survived: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cacheB, "example.com", "r@v0.1.0")); err != nil {
		t.Errorf("b's copy was removed: %v", err)
	}
}

// TestShellQuote: a value with spaces and quotes comes back whole from a
// POSIX shell.
func TestShellQuote(t *testing.T) {
	const v = `a b 'c' "d" $HOME`
	out, err := exec.Command("sh", "-c", "export X="+shellQuote(v)+`; printf %s "$X"`).Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != v {
		t.Errorf("got %q, want %q", out, v)
	}
}

// TestEnvScriptTwiceInOneShell: scripts/modproxy/env.sh, sourced twice in
// one shell (as after changing the clone), exports the same environment
// both times, each list holding each entry once; the go command that runs
// modproxy the second time is not refused by the first run's exports
// (GOWORK=off used to make it "main module does not contain package",
// and the eval returned 0 with nothing exported). Sourced from a folder
// that is not the clone's root, it fails loudly: status 1, a message, and
// nothing exported.
func TestEnvScriptTwiceInOneShell(t *testing.T) {
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	show := `printf '%s|%s|%s|%s|%s\n' "$GOWORK" "$GOPROXY" "$GONOSUMDB" "$GOFLAGS" "$GOMODCACHE"`
	script := "set -u\n. scripts/modproxy/env.sh || exit 9\n" + show + "\n. scripts/modproxy/env.sh || exit 10\n" + show + "\n" +
		"cd scripts && GOPROXY=unchanged; . modproxy/env.sh; echo \"status $? GOPROXY $GOPROXY\"\n"
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = strings.TrimSpace(string(root))
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("want three lines, got:\n%s\nstderr:\n%s", out, stderr.String())
	}
	first, second := strings.Split(lines[0], "|"), strings.Split(lines[1], "|")
	if first[0] != "off" || !strings.HasPrefix(first[1], "file://") || !strings.Contains(first[3], "-mod=mod") {
		t.Errorf("the first run exported %q", lines[0])
	}
	if lines[1] != lines[0] {
		t.Errorf("the second run exported\n %s\nthe first\n %s", lines[1], lines[0])
	}
	for i, sep := range map[int]string{1: ",", 2: ",", 3: " "} {
		items := strings.Split(second[i], sep)
		if len(slices.Compact(slices.Sorted(slices.Values(items)))) != len(items) {
			t.Errorf("a repeated entry in %q", second[i])
		}
	}
	if lines[2] != "status 1 GOPROXY unchanged" || !strings.Contains(stderr.String(), "nothing exported") {
		t.Errorf("sourced outside the clone's root: %q, stderr %q; want status 1, a message and nothing exported", lines[2], stderr.String())
	}
}
