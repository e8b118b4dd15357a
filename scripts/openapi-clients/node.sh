#!/usr/bin/env bash
# The Node side of the clients check (docs/openapi.md, "Clients"), for
# examples/orders, examples/openapi and examples/hello, each run as its
# TestServeForClients serves it (the App main builds, on a free loopback
# port), driven by the client for the answers a request alone cannot
# reach, and answering the 500 every operation declares to a request
# carrying the fault switch's header (fxtest.FaultHeader):
#   - Spectral (extends spectral:oas) lints the served document: no
#     warning (--fail-severity=warn);
#   - openapi-typescript generates its types, tsc (strict) compiles the
#     example's client (node/NAME.ts, openapi-fetch) against them, so
#     every error code it reads must be an enum and every details typed;
#   - the client runs with node through Prism in proxy mode in front of
#     the example: it exercises every declared response, each (operation,
#     status, code) of the document, none excused, and Prism reports no
#     response violation,
#     no violation on a request meant to be valid and at least one on a
#     request meant to be invalid (node/harness.ts).
# Versions are pinned by node/package-lock.json (npm ci).
#   usage: scripts/openapi-clients/node.sh   (from the repository root)
set -euo pipefail
root=$(pwd)
node_dir="$root/scripts/openapi-clients/node"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
(cd "$node_dir" && npm ci --no-audit --no-fund --silent >/dev/null)
echo 'extends: ["spectral:oas"]' > "$work/spectral.yaml"

# free_port prints a loopback port nothing listens on.
free_port() { node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'; }

# wait_for URL: until it answers (at most 60 s).
wait_for() {
  for _ in $(seq 1 120); do
    curl -s -o /dev/null "$1" && return 0
    sleep 0.5
  done
  echo "no answer from $1"; return 1
}

mkdir -p "$node_dir/gen"
# Each example runs as its TestServeForClients serves it (the App main
# builds, on a loopback port it prints), whose stdin, a named pipe this
# script keeps open, the client writes to (node/harness.ts, control): a
# request held in the orders handler for its 409 and 503, the user store
# marked unreachable for GET /readyz's 503.
for name in hello openapi orders; do
  go test -c -o "$work/$name" "./examples/$name"
done
for name in hello openapi orders; do
  mkfifo "$work/$name.in"
  FX_SERVE_FOR_CLIENTS=1 "$work/$name" -test.run '^TestServeForClients$' <"$work/$name.in" >"$work/$name.log" 2>&1 &
  pids+=($!)
  exec {fd}>"$work/$name.in" # held open: the server returns when its stdin closes
  for _ in $(seq 1 120); do
    grep -q '^listening 127.0.0.1:' "$work/$name.log" && break
    sleep 0.5
  done
  server="http://$(grep -m1 -o '^listening 127.0.0.1:[0-9]*' "$work/$name.log" | grep -o '127.0.0.1:[0-9]*')" || { cat "$work/$name.log"; exit 1; }
  wait_for "$server/openapi.json"
  curl -sf "$server/openapi.json" -o "$work/$name.json"
  echo "-- examples/$name: Spectral (spectral:oas)"
  (cd "$node_dir" && npx spectral lint --ruleset "$work/spectral.yaml" --fail-severity=warn "$work/$name.json")
  echo "-- examples/$name: openapi-typescript"
  (cd "$node_dir" && npx openapi-typescript "$work/$name.json" -o "gen/$name.d.ts" >/dev/null)
done
echo "-- tsc (strict) over the clients"
(cd "$node_dir" && rm -rf build && npx tsc -p .)
for name in hello openapi orders; do
  server=$(grep -m1 -o '^listening 127.0.0.1:[0-9]*' "$work/$name.log" | grep -o '127.0.0.1:[0-9]*')
  prism_port=$(free_port)
  echo "-- examples/$name: the client through Prism (proxy) at 127.0.0.1:$prism_port"
  # the prism process itself (not npx around it), so that cleanup stops it
  "$node_dir/node_modules/.bin/prism" proxy "$work/$name.json" "http://$server" -h 127.0.0.1 -p "$prism_port" >"$work/$name.prism.log" 2>&1 &
  pids+=($!)
  wait_for "http://127.0.0.1:$prism_port/openapi.json" || { cat "$work/$name.prism.log"; exit 1; }
  (cd "$node_dir" && FX_CONTROL="$work/$name.in" FX_CONTROL_OUT="$work/$name.log" FX_DOC="$work/$name.json" \
    FX_PRISM="http://127.0.0.1:$prism_port" FX_SERVER="http://$server" node "build/$name.js")
done
echo "node: Spectral 0 warnings; openapi-typescript + openapi-fetch clients typed and run through Prism with no violation"
