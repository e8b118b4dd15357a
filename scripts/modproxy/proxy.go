package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// repoModule is one go.mod of the repository.
type repoModule struct {
	Dir  string // absolute directory holding go.mod
	Rel  string // Dir relative to the repository root, "." for the root
	Path string // module path
	File *modfile.File
	Data []byte // go.mod as written
}

// repoModules returns the top of the repository holding the current
// directory and its modules (see findModules).
func repoModules() (string, []repoModule, error) {
	root, err := repoRoot()
	if err != nil {
		return "", nil, err
	}
	mods, err := findModules(root)
	return root, mods, err
}

// findModules lists the modules under root, the root first. Like the go
// command it skips testdata and directories whose names begin with "." or
// "_".
func findModules(root string) ([]repoModule, error) {
	var mods []repoModule
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "go.mod" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := modfile.Parse(path, data, nil)
		if err != nil {
			return err
		}
		if f.Module == nil {
			return fmt.Errorf("%s: no module line", path)
		}
		dir := filepath.Dir(path)
		rel, _ := filepath.Rel(root, dir)
		mods = append(mods, repoModule{Dir: dir, Rel: filepath.ToSlash(rel), Path: f.Module.Mod.Path, File: f, Data: data})
		return nil
	})
	slices.SortFunc(mods, func(a, b repoModule) int {
		if a.Rel == "." || b.Rel == "." {
			return boolCmp(b.Rel == ".", a.Rel == ".")
		}
		return strings.Compare(a.Rel, b.Rel)
	})
	return mods, err
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// sharedVersion returns the one version at which the repository's modules
// require each other. It fails when none requires another, when two
// requirements disagree, or when a requirement carries a replace (local
// development goes through go.work, never through go.mod).
func sharedVersion(mods []repoModule) (string, error) {
	own := map[string]bool{}
	for _, m := range mods {
		own[m.Path] = true
	}
	found := map[string][]string{} // version -> "module requires path"
	for _, m := range mods {
		for _, r := range m.File.Require {
			if own[r.Mod.Path] {
				found[r.Mod.Version] = append(found[r.Mod.Version], m.Rel+" requires "+r.Mod.Path)
			}
		}
		for _, r := range m.File.Replace {
			if own[r.Old.Path] {
				return "", fmt.Errorf("%s/go.mod replaces %s: use go.work for local development", m.Rel, r.Old.Path)
			}
		}
	}
	if len(found) == 0 {
		return "", fmt.Errorf("no module of the repository requires another")
	}
	if len(found) > 1 {
		var lines []string
		for v, who := range found {
			lines = append(lines, fmt.Sprintf("%s: %s", v, strings.Join(who, ", ")))
		}
		slices.Sort(lines)
		return "", fmt.Errorf("the modules require each other at different versions:\n  %s", strings.Join(lines, "\n  "))
	}
	for v := range found {
		if !semver.IsValid(v) || module.IsPseudoVersion(v) || v == "v0.0.0" {
			return "", fmt.Errorf("the modules require each other at %s, not a release version", v)
		}
		return v, nil
	}
	panic("unreachable")
}

// buildProxy writes into out a file-system module proxy serving every module
// of the repository at version: the layout GOPROXY=file://out reads
// (<escaped path>/@v/list, <v>.info, <v>.mod, <v>.zip). The files come from
// `git archive rev`, or from the working tree when rev is empty. An empty
// version means the one the modules require of each other. It returns the
// version served.
func buildProxy(repo, rev, version, out string) (string, error) {
	tree, err := os.MkdirTemp("", "modproxy-tree-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tree)
	if err := materialise(repo, rev, tree); err != nil {
		return "", err
	}
	mods, err := findModules(tree)
	if err != nil {
		return "", err
	}
	if version == "" {
		if version, err = sharedVersion(mods); err != nil {
			return "", err
		}
	}
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return "", fmt.Errorf("%q is not a canonical semantic version", version)
	}
	when, err := commitTime(repo, rev)
	if err != nil {
		return "", err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, when})
	for _, m := range mods {
		if err := module.Check(m.Path, version); err != nil {
			return "", err
		}
		if err := writeVersion(out, m, version, info); err != nil {
			return "", err
		}
	}
	return version, nil
}

// writeVersion adds one module version to the proxy in out.
func writeVersion(out string, m repoModule, version string, info []byte) error {
	escPath, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	escVer, err := module.EscapeVersion(version)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var zip bytes.Buffer
	if err := modzip.CreateFromDir(&zip, module.Version{Path: m.Path, Version: version}, m.Dir); err != nil {
		return fmt.Errorf("zip of %s: %w", m.Path, err)
	}
	for name, data := range map[string][]byte{escVer + ".zip": zip.Bytes(), escVer + ".mod": m.Data, escVer + ".info": info} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	list := filepath.Join(dir, "list")
	old, err := os.ReadFile(list)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if slices.Contains(strings.Fields(string(old)), version) {
		return nil
	}
	return os.WriteFile(list, append(old, version+"\n"...), 0o644)
}

// commitTime is the committer time of rev, or of HEAD for the working tree.
func commitTime(repo, rev string) (time.Time, error) {
	if rev == "" {
		rev = "HEAD"
	}
	out, err := exec.Command("git", "-C", repo, "log", "-1", "--format=%cI", rev).Output()
	if err != nil {
		return time.Time{}, fmt.Errorf("git log %s: %w", rev, err)
	}
	return time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
}
