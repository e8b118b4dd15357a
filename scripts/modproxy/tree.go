package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// repoRoot returns the top of the git repository holding the current
// directory.
func repoRoot() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("not inside a git repository: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// materialise writes the repository's files into dst: `git archive rev` when
// rev is set, otherwise the working tree's tracked and untracked-but-not-
// ignored files (what the next commit would hold, build output excluded).
func materialise(repo, rev, dst string) error {
	if rev != "" {
		return extractArchive(repo, rev, dst)
	}
	out, err := exec.Command("git", "-C", repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		src := filepath.Join(repo, filepath.FromSlash(name))
		info, err := os.Lstat(src)
		if err != nil {
			if os.IsNotExist(err) { // deleted in the working tree, not yet in the index
				continue
			}
			return err
		}
		if !info.Mode().IsRegular() {
			continue // the module zip format holds regular files only
		}
		if err := copyFile(src, filepath.Join(dst, filepath.FromSlash(name)), info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// extractArchive unpacks `git archive rev` into dst.
func extractArchive(repo, rev, dst string) error {
	var stderr bytes.Buffer
	cmd := exec.Command("git", "-C", repo, "archive", "--format=tar", rev)
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	tr := tar.NewReader(pipe)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			cmd.Wait()
			return fmt.Errorf("git archive %s: %w %s", rev, err, stderr.String())
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		path := filepath.Join(dst, filepath.FromSlash(h.Name))
		if err := writeFile(path, tr, fs.FileMode(h.Mode).Perm()); err != nil {
			cmd.Wait()
			return err
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive %s: %w %s", rev, err, stderr.String())
	}
	return nil
}

func copyFile(src, dst string, perm fs.FileMode) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	return writeFile(dst, f, perm)
}

func writeFile(path string, r io.Reader, perm fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
