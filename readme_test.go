package fx_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeStartsWithCommands checks the README opens with the two
// commands a newcomer needs.
func TestReadmeStartsWithCommands(t *testing.T) {
	t.Parallel()
	head := readDoc(t, "README.md")
	if len(head) > 400 {
		head = head[:400]
	}
	for _, cmd := range []string{"go run ./examples/hello", "go test ./..."} {
		if !strings.Contains(head, cmd) {
			t.Errorf("README does not open with %q", cmd)
		}
	}
}

// TestReadmeIsShort: the README is the front page (what fx is, install,
// the demo, a service, the packages, links); topics live in docs/.
func TestReadmeIsShort(t *testing.T) {
	t.Parallel()
	if n := strings.Count(readDoc(t, "README.md"), "\n"); n > 300 {
		t.Errorf("README.md has %d lines; move topics to docs/ (at most 300)", n)
	}
}

// TestReadmeListsEveryPackage: every package and every module of the
// repository has a row in the README's package table: the root as
// `github.com/fxhq/fx`, a package as `.../fx/<dir>`, bench/ and each
// example by its directory (their sub-packages are covered by that row).
func TestReadmeListsEveryPackage(t *testing.T) {
	t.Parallel()
	readme := readDoc(t, "README.md")
	dirs := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !(name == "go.mod" || strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")) {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if parts := strings.Split(dir, "/"); parts[0] == "bench" {
			dir = "bench"
		} else if parts[0] == "examples" && len(parts) > 2 {
			dir = parts[0] + "/" + parts[1]
		}
		dirs[dir] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range dirs {
		var row string
		switch {
		case dir == ".":
			row = "| `github.com/fxhq/fx` |"
		case dir == "bench":
			row = "| `bench/`"
		case strings.HasPrefix(dir, "examples/"):
			row = "| `" + dir + "`"
		default:
			row = "| `.../fx/" + dir + "`"
		}
		if !strings.Contains(readme, row) {
			t.Errorf("README's package table has no row for %s (want a row starting %q)", dir, row)
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && dir != "." && !strings.Contains(readme, row+" (**module**)") {
			t.Errorf("README's row for %s does not mark it a module", dir)
		}
	}
}
