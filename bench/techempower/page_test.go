package main

import (
	"os"
	"strings"
	"testing"
)

// TestDatabasePageIsTheEntrysCode keeps docs/database.md true: every
// paragraph (a run of lines between blank lines) of each of its Go blocks,
// import lines aside, is in the entry's sources as it is, so the page
// shows the code that runs. The root's documentation test compiles the
// same blocks against pgx in this module.
func TestDatabasePageIsTheEntrysCode(t *testing.T) {
	page, err := os.ReadFile("../../docs/database.md")
	if err != nil {
		t.Fatal(err)
	}
	var sources strings.Builder
	for _, f := range []string{"main.go", "app.go", "internal/world/world.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources.Write(b)
	}
	blocks := strings.Split(string(page), "```go\n")[1:]
	if len(blocks) == 0 {
		t.Fatal("docs/database.md has no Go block")
	}
	for i, b := range blocks {
		code, _, _ := strings.Cut(b, "```")
		for _, para := range strings.Split(strings.TrimSpace(code), "\n\n") {
			if strings.HasPrefix(para, "import ") {
				continue
			}
			if !strings.Contains(sources.String(), para) {
				t.Errorf("Go block %d of docs/database.md holds code the entry does not have:\n%s", i+1, para)
			}
		}
	}
}
