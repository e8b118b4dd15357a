#!/usr/bin/env bash
# Refuses what must not be committed: a tracked file over 2 MiB, or a
# tracked executable (ELF, Mach-O or PE, recognised by its magic bytes, not
# by its name or mode). Build output belongs in .gitignore.
# Usage: scripts/check-files.sh [repository]   (default: the current one)
set -euo pipefail
cd "${1:-.}"
limit=$((2 * 1024 * 1024))
bad=0
# hex prints the n bytes of file f at offset off as lowercase hex.
hex() { od -An -tx1 -j "$3" -N "$2" -- "$1" | tr -d ' \n'; }
while IFS= read -r -d '' f; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue # deleted in the work tree, or a symlink
  size=$(stat -c %s -- "$f")
  if [ "$size" -gt "$limit" ]; then
    echo "$f: $size bytes, over 2 MiB"; bad=1
  fi
  kind=
  case "$(hex "$f" 4 0)" in
    7f454c46) kind=ELF ;;
    feedface | feedfacf | cefaedfe | cffaedfe | cafebabe | bebafeca) kind=Mach-O ;;
    4d5a*) # MZ: a PE image has "PE\0\0" at the offset stored at 0x3c
      if [ "$size" -ge 64 ]; then
        o=$(hex "$f" 4 60)
        off=$((16#${o:6:2}${o:4:2}${o:2:2}${o:0:2}))
        [ "$off" -le $((size - 4)) ] && [ "$(hex "$f" 4 "$off")" = 50450000 ] && kind=PE
      fi ;;
  esac
  if [ -n "$kind" ]; then
    echo "$f: a compiled $kind executable"; bad=1
  fi
done < <(git ls-files -z)
if [ "$bad" -ne 0 ]; then
  echo "remove these files from git (git rm --cached) and ignore build output in .gitignore"
  exit 1
fi
