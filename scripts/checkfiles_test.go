package scripts_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckFilesRefusesBinariesAndLargeFiles runs scripts/check-files.sh on
// small repositories: it passes a clean one (text that merely begins with
// "MZ" included) and refuses each of an ELF executable, a PE image, a
// Mach-O image and a file over 2 MiB.
func TestCheckFilesRefusesBinariesAndLargeFiles(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs("check-files.sh")
	if err != nil {
		t.Fatal(err)
	}
	elf, err := os.ReadFile("/bin/true")
	if err != nil || !bytes.HasPrefix(elf, []byte("\x7fELF")) {
		t.Fatalf("need an ELF executable at /bin/true: %v", err)
	}
	pe := make([]byte, 256)
	copy(pe, "MZ")
	binary.LittleEndian.PutUint32(pe[0x3c:], 0x80)
	copy(pe[0x80:], "PE\x00\x00")
	macho := append([]byte{0xcf, 0xfa, 0xed, 0xfe}, make([]byte, 64)...)

	for _, tc := range []struct {
		name, file string
		data       []byte
		want       string // "" means the check passes
	}{
		{"clean", "notes.txt", []byte("MZ is how this note begins\n"), ""},
		{"ELF", "tool", elf, "ELF executable"},
		{"PE", "tool.dat", pe, "PE executable"},
		{"Mach-O", "tool", macho, "Mach-O executable"},
		{"over 2 MiB", "big.json", bytes.Repeat([]byte("x"), 2<<20+1), "over 2 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := t.TempDir()
			run(t, repo, nil, "git", "init", "-q")
			if err := os.WriteFile(filepath.Join(repo, "README"), []byte("fine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(repo, tc.file), tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			run(t, repo, nil, "git", "add", ".")
			out, err := exec.Command("bash", script, repo).CombinedOutput()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("check-files refused a clean repository: %v\n%s", err, out)
			case tc.want != "" && err == nil:
				t.Fatalf("check-files passed %s", tc.name)
			case tc.want != "" && !strings.Contains(string(out), tc.file+": ") || !strings.Contains(string(out), tc.want):
				t.Fatalf("check-files said %q, want %q about %s", out, tc.want, tc.file)
			}
		})
	}
}

// TestBuildOutputIsIgnored: for every command of the repository (a main
// package), the binary `go build` writes in its folder and at the
// repository root (and, for bench's commands, in bench/) is ignored by git, so it cannot be committed by
// accident. Names that are also folders there cannot be written, so are
// not checked.
func TestBuildOutputIsIgnored(t *testing.T) {
	t.Parallel()
	repo := run(t, ".", nil, "git", "rev-parse", "--show-toplevel")
	dirs := strings.Split(run(t, repo, nil, "go", "list", "-f", "{{if eq .Name \"main\"}}{{.Dir}}{{end}}", "work"), "\n")
	var checked int
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		name := filepath.Base(dir)
		outs := []string{dir, repo}
		if strings.HasPrefix(dir, filepath.Join(repo, "bench")+string(filepath.Separator)) {
			outs = append(outs, filepath.Join(repo, "bench"))
		}
		for _, out := range outs {
			path := filepath.Join(out, name)
			if fi, err := os.Stat(path); err == nil && fi.IsDir() {
				continue
			}
			rel, _ := filepath.Rel(repo, path)
			cmd := exec.Command("git", "check-ignore", "-q", "--no-index", rel)
			cmd.Dir = repo
			if err := cmd.Run(); err != nil {
				t.Errorf("%s (go build output of %s) is not ignored by .gitignore", rel, dir)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d build outputs", checked)
	}
}
