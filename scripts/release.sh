#!/usr/bin/env bash
# Tags one release of every published module of the repository at the same
# commit: vX.Y.Z for the root module, DIR/vX.Y.Z for each nested module
# (otel/vX.Y.Z, wasm/vX.Y.Z, ...). Modules under scripts/ are tooling and
# are not tagged.
#
# Usage: scripts/release.sh [--dry-run [--ci]] vX.Y.Z
#
# It refuses a work tree with changes, a version already tagged, a
# CHANGELOG.md without a dated heading "## [X.Y.Z] - YYYY-MM-DD", and a
# failing CI (bash .ci/run). Then it makes every module require the others at
# vX.Y.Z (go.work maps that version to the folders), writes the go.sum hashes
# of the repository's own modules at that version, commits that as
# "release vX.Y.Z" and tags. It pushes nothing; it prints the push command.
#
# With --dry-run it refuses nothing: it reports what a release would refuse
# ("would refuse: ..."), then prepares the release commit in a temporary
# worktree of HEAD and shows what it would change and the tags it would
# make, leaving the repository as it was. It runs CI only with --ci (CI is
# the long part: see docs/modules.md for the times).
set -euo pipefail

die() { echo "release: $*" >&2; exit 1; }

usage="usage: scripts/release.sh [--dry-run [--ci]] vX.Y.Z"
dry=0 ci=1 dry_ci=0 version=
for arg in "$@"; do
  case "$arg" in
    --dry-run) dry=1 ;;
    --ci) dry_ci=1 ;;
    v*) [ -z "$version" ] || die "one version only"; version=$arg ;;
    *) die "$usage" ;;
  esac
done
[ -n "$version" ] || die "$usage"
if [ "$dry" = 1 ]; then ci=$dry_ci; elif [ "$dry_ci" = 1 ]; then die "--ci goes with --dry-run (a release always runs CI)"; fi

# refuse REASON: a release stops here; a dry run reports it and goes on.
refusals=()
refuse() {
  if [ "$dry" = 1 ]; then
    refusals+=("$*")
    echo "release: would refuse: $*" >&2
  else
    die "$*"
  fi
}
[[ "$version" =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]] ||
  die "$version is not a semantic version vMAJOR.MINOR.PATCH[-PRERELEASE]"
major=${BASH_REMATCH[1]}
[ "$major" -le 1 ] || die "v$major needs /v$major in every module path first"

cd "$(git rev-parse --show-toplevel)"
repo=$(pwd)

[ -z "$(git status --porcelain)" ] || refuse "the work tree has changes; commit or stash them first"

# The published modules and their tags, the root first.
mapfile -t modules < <(git ls-files '*go.mod' | grep -v -e '/testdata/' -e '^scripts/' | xargs -n1 dirname | sort)
tags=()
for m in "${modules[@]}"; do
  if [ "$m" = . ]; then tags+=("$version"); else tags+=("$m/$version"); fi
done
for t in "${tags[@]}"; do
  if git rev-parse -q --verify "refs/tags/$t" >/dev/null; then refuse "tag $t already exists"; fi
done

grep -Eq "^## \[${version#v}\] - [0-9]{4}-[0-9]{2}-[0-9]{2}\b" CHANGELOG.md ||
  refuse "CHANGELOG.md has no heading \"## [${version#v}] - YYYY-MM-DD\" for this release (its top heading says $(grep -m1 '^## ' CHANGELOG.md || echo nothing))"

if [ "$ci" = 1 ]; then
  echo "== CI (bash .ci/run)"
  bash .ci/run || refuse "CI fails; nothing was changed or tagged"
else
  echo "== dry run: CI not run (add --ci to run bash .ci/run too)"
fi

# prepare DIR: in the checkout DIR, make the modules require each other at
# $version and write their go.sum hashes (modproxy tidy -write -strict),
# then check the result is tidy.
prepare() {
  (
    cd "$1"
    go run ./scripts/modproxy setversion "$version"
    go run ./scripts/modproxy tidy -write -strict
    go run ./scripts/modproxy tidy -strict
  )
}

# commit_and_tag DIR: commit what prepare changed and tag that commit.
commit_and_tag() {
  (
    cd "$1"
    if [ -n "$(git status --porcelain)" ]; then
      git add -A
      git commit -q -m "release $version: the modules require each other at $version"
    fi
    for t in "${tags[@]}"; do
      git tag -a -m "release $version ($t)" "$t"
    done
    git log --oneline -1
  )
}

if [ "$dry" = 1 ]; then
  work=$(mktemp -d)
  trap 'git -C "$repo" worktree remove --force "$work" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  git worktree add -q --detach "$work" HEAD
  prepare "$work"
  echo "== dry run: the release commit would change"
  git -C "$work" status --short
  echo "== dry run: the tags would be (at that commit)"
  printf '  %s\n' "${tags[@]}"
  if [ "${#refusals[@]}" -gt 0 ]; then
    echo "== dry run: a release now would refuse:"
    printf '  %s\n' "${refusals[@]}"
  else
    if [ "$ci" = 1 ]; then echo "== dry run: a release now would refuse nothing"; else echo "== dry run: a release now would refuse nothing CI aside (not run)"; fi
  fi
  exit 0
fi

prepare "$repo"
echo "== release commit and tags"
commit_and_tag "$repo"
printf '  %s\n' "${tags[@]}"
echo "publish with: git push origin HEAD ${tags[*]}"
