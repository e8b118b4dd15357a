package scripts_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// installMarker precedes, in README.md, the shell block a newcomer runs to
// use fx before its release is published.
const installMarker = "<!-- install: before the release -->"

// TestReadmeInstallWorks follows README.md word for word, as a newcomer
// would: in a fresh clone of this repository's HEAD it runs the README's
// install block with bash (the `eval` of modproxy env, a module of one's
// own beside the clone, `go get github.com/fxhq/fx@v0.1.0`), saves the
// README's service as main.go there, and builds and vets it. The user's
// cache directory is a temporary one, so the proxy and its module cache
// are the test's; the build cache is the machine's.
func TestReadmeInstallWorks(t *testing.T) {
	repo := run(t, ".", nil, "git", "rev-parse", "--show-toplevel")
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "fx")
	run(t, ".", nil, "git", "clone", "-q", repo, clone)
	readme := run(t, clone, nil, "cat", "README.md")

	install := fencedAfter(t, readme, installMarker, "```sh\n")
	service := fencedAfter(t, readme, "\n## A service\n", "```go\npackage main\n")
	service = strings.TrimPrefix(service, "```go\n")
	if !strings.Contains(install, "go get github.com/fxhq/fx@") {
		t.Fatalf("the install block does not go get fx:\n%s", install)
	}

	script := "set -euo pipefail\n" + strings.TrimPrefix(install, "```sh\n") +
		"\ncat > main.go <<'END_OF_MAIN'\n" + service + "END_OF_MAIN\n" +
		"go build -o hello-fx .\ngo vet .\ngo list -m -f '{{.Path}} {{.Version}} {{.Replace}}' github.com/fxhq/fx\npwd\n"
	gocache := run(t, ".", nil, "go", "env", "GOCACHE")
	out := run(t, clone, []string{"XDG_CACHE_HOME=" + filepath.Join(tmp, "cache"), "GOCACHE=" + gocache}, "bash", "-c", script)
	lines := strings.Split(out, "\n")
	if dir := lines[len(lines)-1]; dir == clone || strings.HasPrefix(dir, clone+string(filepath.Separator)) {
		t.Errorf("the README's module is inside the clone (%s)", dir)
	}
	if mod := lines[len(lines)-2]; mod != "github.com/fxhq/fx v0.1.0 <nil>" {
		t.Errorf("the README's module resolved %q, want github.com/fxhq/fx v0.1.0 without a replace", mod)
	}
	if _, err := exec.LookPath(filepath.Join(lines[len(lines)-1], "hello-fx")); err != nil {
		t.Errorf("no program built: %v", err)
	}
}

// fencedAfter returns the fenced block of md that starts with open (the
// fence line included, the closing fence not) after the first marker.
func fencedAfter(t *testing.T, md, marker, open string) string {
	t.Helper()
	_, rest, ok := strings.Cut(md, marker)
	if !ok {
		t.Fatalf("README.md has no %q", marker)
	}
	i := strings.Index(rest, open)
	if i < 0 {
		t.Fatalf("README.md has no block %q after %q", open, marker)
	}
	block, _, ok := strings.Cut(rest[i+len(open):], "\n```")
	if !ok {
		t.Fatalf("README.md: the block after %q is not closed", marker)
	}
	return open + block + "\n"
}
