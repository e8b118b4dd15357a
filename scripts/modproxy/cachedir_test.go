package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCacheDirPrunesGoneOwners: a folder whose owner (a checkout, a
// proxy) was deleted is removed by the next run, read-only module folders
// included; a live owner's folder and a folder without an owner file stay.
func TestCacheDirPrunesGoneOwners(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	gone, live := t.TempDir(), t.TempDir()

	goneDir, err := modproxyCache(gone, "github.com/fxhq/fx")
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(goneDir, "example.com", "m@v1.0.0")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/m\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(mod, 0o555); err != nil { // as the go command leaves a module
		t.Fatal(err)
	}
	legacy := filepath.Join(filepath.Dir(goneDir), "tidy-modcache-0123456789abcdef")
	if err := os.MkdirAll(legacy, 0o755); err != nil {
		t.Fatal(err)
	}
	liveDir, err := defaultProxyDir(live)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(liveDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if again, err := modproxyCache(gone, "github.com/fxhq/fx"); err != nil || again != goneDir {
		t.Fatalf("the same owner's folder again: %q, %v; want %q", again, err, goneDir)
	}
	if _, err := os.Stat(mod); err != nil {
		t.Fatalf("a live owner's module was removed: %v", err)
	}

	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if _, err := proxyCache(live, "github.com/fxhq/fx"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{goneDir, goneDir + ".owner"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s: still there after its owner was deleted (%v)", p, err)
		}
	}
	for _, p := range []string{liveDir, liveDir + ".owner", legacy} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: removed, but its owner exists or it has none: %v", p, err)
		}
	}
}
