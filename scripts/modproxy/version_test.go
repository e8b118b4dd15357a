package main

import (
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

func testModules(t *testing.T, gomods ...string) []repoModule {
	t.Helper()
	var mods []repoModule
	for i, src := range gomods {
		f, err := modfile.Parse("go.mod", []byte(src), nil)
		if err != nil {
			t.Fatal(err)
		}
		mods = append(mods, repoModule{Rel: []string{".", "a", "b"}[i], Path: f.Module.Mod.Path, File: f, Data: []byte(src)})
	}
	return mods
}

// TestSharedVersion: the modules must require each other at one release
// version, never through a replace, never at v0.0.0 or a pseudo-version.
func TestSharedVersion(t *testing.T) {
	const root = "module example.com/r\n"
	for _, tc := range []struct {
		name, a, b, want, err string
	}{
		{"one version", "module example.com/r/a\nrequire example.com/r v0.3.1\n", "module example.com/r/b\nrequire (\n\texample.com/r v0.3.1\n\texample.com/r/a v0.3.1\n)\n", "v0.3.1", ""},
		{"two versions", "module example.com/r/a\nrequire example.com/r v0.3.1\n", "module example.com/r/b\nrequire example.com/r v0.3.0\n", "", "different versions"},
		{"replace", "module example.com/r/a\nrequire example.com/r v0.3.1\nreplace example.com/r => ../\n", "module example.com/r/b\n", "", "use go.work"},
		{"v0.0.0", "module example.com/r/a\nrequire example.com/r v0.0.0\n", "module example.com/r/b\n", "", "not a release version"},
		{"pseudo-version", "module example.com/r/a\nrequire example.com/r v0.0.0-00010101000000-000000000000\n", "module example.com/r/b\n", "", "not a release version"},
		{"nothing shared", "module example.com/r/a\n", "module example.com/r/b\n", "", "requires another"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sharedVersion(testModules(t, root, tc.a, tc.b))
			if tc.err == "" && (err != nil || got != tc.want) {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("got %q, %v; want an error saying %q", got, err, tc.err)
			}
		})
	}
}

// TestRelevantDiff: a tidy diff that only moves the go.sum lines of the
// repository's own modules is tidy unless strict; any other change,
// including a requirement of an own module, is not.
func TestRelevantDiff(t *testing.T) {
	const diff = `diff current/go.sum tidy/go.sum
--- current/go.sum
+++ tidy/go.sum
@@ -1,2 +1,4 @@
+github.com/fxhq/fx v0.1.0 h1:abc=
+github.com/fxhq/fx/otel v0.1.0/go.mod h1:def=
 github.com/google/uuid v1.6.0 h1:x=
`
	if got := relevantDiff(diff, "github.com/fxhq/fx", false); got != "" {
		t.Errorf("own go.sum lines counted as untidy: %q", got)
	}
	if got := relevantDiff(diff, "github.com/fxhq/fx", true); strings.Count(got, "\n") != 1 {
		t.Errorf("strict: got %q, want both own lines", got)
	}
	for _, line := range []string{
		"+github.com/google/uuid v1.6.0/go.mod h1:y=",  // a third-party hash
		"-\tgithub.com/fxhq/fx v0.1.0",                 // a requirement in go.mod
		"+github.com/fxhq/fxtools v0.1.0 h1:z=",        // another module, not below the root path
		"+require github.com/fxhq/fx/otel v0.1.0 h1:q", // not a go.sum line
	} {
		if got := relevantDiff("--- a\n+++ b\n"+line+"\n", "github.com/fxhq/fx", false); got != line {
			t.Errorf("%q: got %q, want it kept", line, got)
		}
	}
}
