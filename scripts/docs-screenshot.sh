#!/usr/bin/env bash
# Renders the documentation page of examples/openapi (openapi.Mount: Redoc
# from assets embedded in the binary) in headless Chromium and saves a
# screenshot, to check by eye that the page renders offline. Run by hand:
#
#	apt-get install -y chromium          # Debian package
#	scripts/docs-screenshot.sh           # writes $TMPDIR/fx-docs.png
#	OUT=/tmp/docs.png PORT=18082 scripts/docs-screenshot.sh
#
# Everything it starts is stopped on exit (trap). Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-${TMPDIR:-/tmp}/fx-docs.png}
PORT=${PORT:-18082}
CHROMIUM=${CHROMIUM:-chromium}

tmp=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/openapi-example" ./examples/openapi
ADDR=127.0.0.1:$PORT "$tmp/openapi-example" &
pid=$!
for _ in $(seq 50); do
	curl -fsS "http://127.0.0.1:$PORT/openapi.json" >/dev/null 2>&1 && break
	sleep 0.1
done
"$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--user-data-dir="$tmp/profile" --window-size=1280,900 \
	--virtual-time-budget=5000 --screenshot="$(realpath -m "$OUT")" \
	"http://127.0.0.1:$PORT/docs" 2>"$tmp/chromium.log" || { cat "$tmp/chromium.log" >&2; exit 1; }
echo "wrote $OUT"
