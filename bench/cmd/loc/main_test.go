package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCount: comments, blank lines and func main do not count; every
// other line holding a token does.
func TestCount(t *testing.T) {
	src := `// Package p.
package p

import "fmt" // one line

/* a block
comment */
func main() {
	fmt.Println("not counted")
}

func f() int {

	return 1 // counted
}
`
	path := filepath.Join(t.TempDir(), "p.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := count(path)
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 { // package, import, func f, return, }
		t.Errorf("count = %d, want 5", n)
	}
}
