package scripts_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// testVersion is the version the tests release in their throwaway clones.
const testVersion = "v0.99.0"

// TestReleaseResolvesOutsideTheRepository is the proof that a release can be
// installed: in a clone of this repository's HEAD it runs a dry run (which
// reports what it would refuse and changes nothing), then releases
// testVersion with scripts/release.sh (CI stubbed to pass: the real CI is
// what runs this test), builds a file-system module proxy from `git archive` of the tag,
// and then, in a fresh module outside the repository that can reach the
// repository's modules only through that proxy, `go get`s every published
// module at the version and builds a program importing every package of
// them (and every command of them). A go.mod that pointed at the file
// system, or a module requiring another at a version it was not tagged at,
// would make this fail.
func TestReleaseResolvesOutsideTheRepository(t *testing.T) {
	clone := cloneForRelease(t, "exit 1")
	head := run(t, clone, nil, "git", "rev-parse", "HEAD")

	// The dry run, on what a clean clone between releases is (no dated
	// heading for the version: v0.98.0 has none) plus a change in the work
	// tree and a CI that would fail, refuses nothing: it reports each
	// refusal, runs no CI unless asked (--ci), still shows the release
	// commit and the tags, and leaves the clone as it was.
	scratch := filepath.Join(clone, "scratch.txt")
	if err := os.WriteFile(scratch, []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(t, clone, nil, "bash", "-c", "bash scripts/release.sh --dry-run v0.98.0 2>&1")
	for _, want := range []string{
		"would refuse: the work tree has changes",
		`would refuse: CHANGELOG.md has no heading "## [0.98.0] - YYYY-MM-DD"`,
		"CI not run",
		"== dry run: the release commit would change",
		"== dry run: the tags would be",
		"  otel/v0.98.0",
		"== dry run: a release now would refuse:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the dry run did not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "CI fails") {
		t.Errorf("the dry run ran CI without --ci:\n%s", out)
	}
	if tags := run(t, clone, nil, "git", "tag", "--list"); tags != "" {
		t.Fatalf("--dry-run made tags:\n%s", tags)
	}
	if got := run(t, clone, nil, "git", "rev-parse", "HEAD"); got != head {
		t.Fatalf("--dry-run committed")
	}
	if st := run(t, clone, nil, "git", "status", "--porcelain"); st != "?? scratch.txt" {
		t.Fatalf("--dry-run changed the work tree:\n%s", st)
	}
	if err := os.Remove(scratch); err != nil {
		t.Fatal(err)
	}
	// CI passes from here on (the real CI is what runs this test).
	if err := os.WriteFile(filepath.Join(clone, ".ci", "run"), []byte("#!/usr/bin/env bash\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, clone, nil, "git", "commit", "-q", "-am", "test: CI stub passes")

	run(t, clone, nil, "bash", "scripts/release.sh", testVersion)

	modules := publishedModules(t, clone)
	commit := run(t, clone, nil, "git", "rev-parse", testVersion+"^{commit}")
	for _, m := range modules {
		tag := testVersion
		if m.dir != "." {
			tag = m.dir + "/" + testVersion
		}
		if got := run(t, clone, nil, "git", "rev-parse", tag+"^{commit}"); got != commit {
			t.Errorf("tag %s is at %s, %s at %s", tag, got, testVersion, commit)
		}
	}
	if v := run(t, clone, nil, "go", "run", "./scripts/modproxy", "version"); v != testVersion {
		t.Fatalf("after the release the modules require each other at %q, want %s", v, testVersion)
	}

	proxy := filepath.Join(t.TempDir(), "proxy")
	run(t, clone, nil, "go", "run", "./scripts/modproxy", "build", "-rev", testVersion, "-o", proxy)

	consumer := filepath.Join(t.TempDir(), "consumer")
	if err := os.MkdirAll(consumer, 0o755); err != nil {
		t.Fatal(err)
	}
	env := consumerEnv(t, clone, proxy)
	run(t, consumer, env, "go", "mod", "init", "example.com/consumer")
	get := []string{"get"}
	for _, m := range modules {
		get = append(get, m.path+"@"+testVersion)
	}
	run(t, consumer, env, "go", get...)

	// Every module resolved to the tagged version, from the proxy.
	var listed []string
	for _, line := range strings.Split(run(t, consumer, env, "go", "list", "-m", "-f", "{{.Path}} {{.Version}} {{.Replace}}", "all"), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(f[0], "github.com/fxhq/fx") {
			if f[1] != testVersion || len(f) > 2 && f[2] != "<nil>" {
				t.Errorf("consumer resolved %s", line)
			}
			listed = append(listed, f[0])
		}
	}
	for _, m := range modules {
		if !slices.Contains(listed, m.path) {
			t.Errorf("consumer's build list lacks %s", m.path)
		}
	}

	// A program importing every importable package, and every command.
	var imports, commands []string
	pkgs := run(t, consumer, env, "go", "list", "-f", "{{.ImportPath}} {{.Name}}", "github.com/fxhq/fx/...")
	for _, line := range strings.Split(pkgs, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) != 2 || strings.Contains(f[0], "/internal/") || strings.HasSuffix(f[0], "/internal"):
		case f[1] == "main":
			commands = append(commands, f[0])
		default:
			imports = append(imports, f[0])
		}
	}
	// A module with no package to import (an example, say) is proven by
	// building its commands; the others are covered by the program.
	var build []string
	for _, m := range modules {
		of := func(p string) bool { return p == m.path || strings.HasPrefix(p, m.path+"/") }
		switch {
		case slices.ContainsFunc(imports, of):
		case slices.ContainsFunc(commands, of):
			for _, c := range commands {
				if of(c) && !slices.ContainsFunc(modules, func(o published) bool {
					return o.path != m.path && len(o.path) > len(m.path) && strings.HasPrefix(c, o.path+"/")
				}) {
					build = append(build, c)
				}
			}
		default:
			t.Errorf("no package of %s is built", m.path)
		}
	}
	var src bytes.Buffer
	src.WriteString("// Command consumer imports every package of an fx release.\npackage main\n\nimport (\n")
	for _, p := range imports {
		fmt.Fprintf(&src, "\t_ %q\n", p)
	}
	src.WriteString(")\n\nfunc main() {}\n")
	if err := os.WriteFile(filepath.Join(consumer, "main.go"), src.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, consumer, env, "go", append([]string{"build", "-trimpath", "."}, build...)...)
	t.Logf("%d modules at %s: %d packages imported, commands %v built", len(modules), testVersion, len(imports), build)
}

// TestReleaseRefuses checks the release script's refusals: each leaves the
// clone without a tag and without a new commit.
func TestReleaseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, ci, version, want string
		dirty                   bool
	}{
		{name: "failing CI", ci: "exit 1", version: testVersion, want: "CI fails"},
		{name: "changes in the work tree", ci: "exit 0", version: testVersion, dirty: true, want: "work tree has changes"},
		{name: "no changelog heading", ci: "exit 0", version: "v0.98.0", want: "CHANGELOG.md has no heading"},
		{name: "not a version", ci: "exit 0", version: "v1.2", want: "not a semantic version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clone := cloneForRelease(t, tc.ci)
			head := run(t, clone, nil, "git", "rev-parse", "HEAD")
			if tc.dirty {
				if err := os.WriteFile(filepath.Join(clone, "CHANGELOG.md"), []byte("edited\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("bash", "scripts/release.sh", tc.version)
			cmd.Dir = clone
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("release.sh %s succeeded:\n%s", tc.version, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("release.sh said %q, want it to say %q", out, tc.want)
			}
			if tags := run(t, clone, nil, "git", "tag", "--list"); tags != "" {
				t.Errorf("a refused release made tags:\n%s", tags)
			}
			if got := run(t, clone, nil, "git", "rev-parse", "HEAD"); got != head {
				t.Errorf("a refused release committed")
			}
		})
	}
}

// cloneForRelease clones this repository's HEAD into a temporary directory
// and commits there a .ci/run that only runs ci (the real CI is what runs
// these tests) and a dated CHANGELOG heading for testVersion.
func cloneForRelease(t *testing.T, ci string) string {
	t.Helper()
	repo := run(t, ".", nil, "git", "rev-parse", "--show-toplevel")
	clone := filepath.Join(t.TempDir(), "fx")
	run(t, ".", nil, "git", "clone", "-q", repo, clone)
	run(t, clone, nil, "git", "config", "user.email", "release-test@example.com")
	run(t, clone, nil, "git", "config", "user.name", "release test")
	if err := os.WriteFile(filepath.Join(clone, ".ci", "run"), []byte("#!/usr/bin/env bash\n"+ci+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	changelog := filepath.Join(clone, "CHANGELOG.md")
	data, err := os.ReadFile(changelog)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("\n## "))
	if i < 0 {
		t.Fatal("CHANGELOG.md has no version heading")
	}
	heading := "\n## [" + strings.TrimPrefix(testVersion, "v") + "] - 2026-01-02\n"
	data = slices.Concat(data[:i], []byte(heading), data[i:])
	if err := os.WriteFile(changelog, data, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, clone, nil, "git", "commit", "-q", "-am", "test: CI stub and changelog heading")
	return clone
}

type published struct{ dir, path string }

// publishedModules lists the modules release.sh tags: every go.mod outside
// scripts/ and testdata.
func publishedModules(t *testing.T, repo string) []published {
	t.Helper()
	var mods []published
	for _, f := range strings.Split(run(t, repo, nil, "git", "ls-files", "*go.mod"), "\n") {
		if strings.HasPrefix(f, "scripts/") || strings.Contains(f, "/testdata/") {
			continue
		}
		dir := filepath.Dir(f)
		var mod struct{ Module struct{ Path string } }
		if err := json.Unmarshal([]byte(run(t, filepath.Join(repo, dir), []string{"GOWORK=off"}, "go", "mod", "edit", "-json")), &mod); err != nil {
			t.Fatal(err)
		}
		mods = append(mods, published{dir, mod.Module.Path})
	}
	if len(mods) < 2 {
		t.Fatalf("found %d published modules", len(mods))
	}
	return mods
}

// consumerEnv is the environment of a user outside the repository, as
// `modproxy env` prints it: no workspace, the repository's modules only
// from the file proxy (never looked up in the checksum database),
// everything else from the local module cache or the machine's proxy, in a
// module cache of the proxy's own, and go.mod updated as needed.
func consumerEnv(t *testing.T, clone, proxy string) []string {
	t.Helper()
	return parseExports(t, run(t, clone, nil, "go", "run", "./scripts/modproxy", "env", "-proxy", proxy))
}

// parseExports turns the `export KEY='VALUE'` lines modproxy env prints
// into KEY=VALUE entries for exec.Cmd.Env.
func parseExports(t *testing.T, out string) []string {
	t.Helper()
	var env []string
	for _, line := range strings.Split(out, "\n") {
		kv, ok := strings.CutPrefix(line, "export ")
		k, v, ok2 := strings.Cut(kv, "=")
		if !ok || !ok2 || len(v) < 2 || v[0] != '\'' || v[len(v)-1] != '\'' {
			t.Fatalf("modproxy env printed %q, not an export line", line)
		}
		env = append(env, k+"="+strings.ReplaceAll(v[1:len(v)-1], `'\''`, "'"))
	}
	return env
}

// run runs name with args in dir (with env added to the environment) and
// returns its trimmed standard output, failing the test on an error.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("%5.1fs %s %s", time.Since(start).Seconds(), name, strings.Join(args, " ")) }()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s%s", name, strings.Join(args, " "), dir, err, stdout.String(), stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}
