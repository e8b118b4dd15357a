package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// What modproxy keeps in the user's cache directory, and when it goes.
//
// Each folder under fx-modproxy belongs to one path: a tidy module cache
// to the checkout it tidies, a proxy's module cache to the proxy's folder,
// the default proxy to its checkout. A folder is named after a hash of its
// owner, so two checkouts (two worktrees, or a clean clone beside the
// working one) never share one, and one's run never deletes what another
// is reading. A module cache holds every third-party module a tidy needs
// (about 800 MB for this repository), and a clean clone that runs .ci/run
// makes a new owner each time, so the folders would pile up without
// bound: each one records its owner in NAME.owner beside it, and every
// call of cacheDir removes the folders whose owner no longer exists (a
// deleted clone, worktree or temporary proxy). Folders without an owner
// file (made before owners were recorded) are left alone. Cost: one
// directory listing and a stat per recorded owner, per modproxy command.

// cacheDir returns the folder prefix-HASH(owner) under the user's cache
// directory's fx-modproxy, recording owner for it, after removing the
// folders of owners that are gone.
func cacheDir(prefix, owner string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	top := filepath.Join(base, "fx-modproxy")
	pruneOrphans(top)
	sum := sha256.Sum256([]byte(owner))
	dir := filepath.Join(top, prefix+hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(top, 0o755); err != nil {
		return "", err
	}
	return dir, os.WriteFile(dir+".owner", []byte(owner), 0o644)
}

// pruneOrphans removes each folder under top whose NAME.owner names a path
// that no longer exists, with its owner file. A module cache's files are
// read-only unless the go command ran with -modcacherw, so they are made
// writable first. It is a clean-up: what it cannot remove stays, for the
// next run, and the command goes on.
func pruneOrphans(top string) {
	owners, _ := filepath.Glob(filepath.Join(top, "*.owner"))
	for _, f := range owners {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // another run removed it
		}
		if _, err := os.Stat(string(b)); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if removeAll(strings.TrimSuffix(f, ".owner")) == nil {
			os.Remove(f)
		}
	}
}

// removeAll is os.RemoveAll for a tree that may hold read-only folders.
func removeAll(dir string) error {
	if os.RemoveAll(dir) == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// modproxyCache returns the module cache tidy's go commands share for the
// repository at root (its folder, owned by root), which keeps third-party
// modules between runs (extracting them all again costs most of a minute)
// but never the repository's own modules, whose content under one version
// changes with every edit; those are removed before it is returned.
func modproxyCache(root, rootPath string) (string, error) {
	dir, err := cacheDir("tidy-modcache-", root)
	if err != nil {
		return "", err
	}
	return dir, clearOwn(dir, rootPath)
}

// proxyCache returns the module cache of the file proxy in dir (an
// absolute path; the folder is owned by dir), so two proxies never share
// one and nothing else uses it. The repository's own modules are removed
// from it first: dir may have been rebuilt since, with other files under
// the same version.
func proxyCache(dir, rootPath string) (string, error) {
	cache, err := cacheDir("modcache-", dir)
	if err != nil {
		return "", err
	}
	return cache, clearOwn(cache, rootPath)
}

// defaultProxyDir is where `modproxy env` without -proxy builds the proxy
// of the repository at root: a folder of the user's cache owned by root.
func defaultProxyDir(root string) (string, error) {
	return cacheDir("proxy-", root)
}
