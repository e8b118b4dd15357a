#!/bin/sh
# Regenerates the committed .wasm fixtures from their .wat sources.
# Needs wat2wasm from WABT (Debian: apt-get install wabt; npm: npx wabt).
# Run from the repository root with: go generate ./wasm
set -e
cd "$(dirname "$0")"
for f in *.wat; do
	wat2wasm "$f" -o "${f%.wat}.wasm"
done
