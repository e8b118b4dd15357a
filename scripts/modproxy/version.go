package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// runVersion prints the version at which the repository's modules require
// each other.
func runVersion(args []string) error {
	fs := flag.NewFlagSet("version", flag.ExitOnError)
	fs.Parse(args)
	_, mods, err := repoModules()
	if err != nil {
		return err
	}
	v, err := sharedVersion(mods)
	if err != nil {
		return err
	}
	fmt.Println(v)
	return nil
}

// runSetVersion makes every requirement between the repository's modules
// name one version, and rewrites go.work's replacements so that, in the
// workspace, that version of each required module is its folder (the go
// command reads a required version's go.mod even when the module is in the
// workspace, and before a release no proxy serves it).
func runSetVersion(args []string) error {
	fs := flag.NewFlagSet("setversion", flag.ExitOnError)
	fs.Parse(args)
	if fs.NArg() != 1 || !semver.IsValid(fs.Arg(0)) || semver.Canonical(fs.Arg(0)) != fs.Arg(0) {
		return fmt.Errorf("setversion: want one canonical version such as v1.2.3")
	}
	version := fs.Arg(0)
	root, mods, err := repoModules()
	if err != nil {
		return err
	}
	dirOf := map[string]string{}
	for _, m := range mods {
		dirOf[m.Path] = m.Rel
	}
	required := map[string]bool{}
	for _, m := range mods {
		f := m.File
		for _, r := range f.Require {
			if _, own := dirOf[r.Mod.Path]; own {
				required[r.Mod.Path] = true
				if err := f.AddRequire(r.Mod.Path, version); err != nil {
					return err
				}
			}
		}
		if err := writeFormatted(m.Dir+"/go.mod", f.Format); err != nil {
			return err
		}
	}
	workPath := filepath.Join(root, "go.work")
	data, err := os.ReadFile(workPath)
	if err != nil {
		return err
	}
	w, err := modfile.ParseWork(workPath, data, nil)
	if err != nil {
		return err
	}
	for _, r := range w.Replace {
		if _, own := dirOf[r.Old.Path]; own {
			if err := w.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return err
			}
		}
	}
	for _, m := range mods {
		if required[m.Path] {
			dir := "./" + m.Rel
			if m.Rel == "." {
				dir = "./"
			}
			if err := w.AddReplace(m.Path, version, dir, ""); err != nil {
				return err
			}
		}
	}
	w.Cleanup()
	return writeFormatted(workPath, func() ([]byte, error) { return modfile.Format(w.Syntax), nil })
}

func writeFormatted(path string, format func() ([]byte, error)) error {
	out, err := format()
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}
