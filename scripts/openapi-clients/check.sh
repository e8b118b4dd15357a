#!/usr/bin/env bash
# Generates the clients of the examples' OpenAPI documents with each of
# the generators fx's documents are held to (docs/openapi.md, "Clients"),
# as served, with no flags that skip what a generator cannot handle, and
# proves them:
#   - the document examples/NAME serves is kept, in its golden form (keys
#     sorted, indented: cmd/golden), as testdata/NAME.json, committed, so
#     that a change of contract reads as a diff of the lines it changes.
#     With CI set, a served document that differs from its golden file
#     fails: run this script and commit testdata/. Without CI the script
#     rewrites the golden files;
#   - ogen and oapi-codegen (Go; versions pinned by the `tool` lines of
#     this folder's go.mod, run with `go tool`) write the clients to
#     gen/ogen/NAME and gen/oapi/NAME at every run; they are never
#     committed (only each package's doc.go is). Then `go vet` and
#     `go test` of this module with the `clients` build tag, which build
#     each example, start it on 127.0.0.1 and call every operation through
#     both clients until every declared response has been decoded typed
#     (live_test.go), and run docs/clients.md's program (cmd/orders-client);
#   - openapi-typescript + openapi-fetch, type-checked by tsc, the orders
#     types against typed.ts (npx caches in ~/.npm).
# DIR holds the served documents (FX_OPENAPI_OUT=DIR go test -run
# '^TestDocument$' ./examples/..., as .ci/run does); without it the
# script writes them itself.
#   usage: scripts/openapi-clients/check.sh [DIR]
set -euo pipefail
OPENAPI_TS_VERSION=7.13.0
OPENAPI_FETCH_VERSION=0.17.0
TYPESCRIPT_VERSION=5.9.3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ $# -ge 1 ]; then
  docs=$(cd "$1" && pwd)
else
  docs="$work/docs"; mkdir "$docs"
  (cd "$root" && FX_OPENAPI_OUT="$docs" go test -count=1 -run '^TestDocument$' ./examples/... >/dev/null)
fi
compgen -G "$docs/examples-*.json" >/dev/null || { echo "no example document in $docs"; exit 1; }

cd "$here"
# Everything generated is written anew: a document no longer served
# leaves no client behind.
find gen -name '*gen.go' -delete
mkdir -p testdata "$work/ts" "$work/golden"
go build -o "$work/golden-cmd" ./cmd/golden
for f in "$docs"/examples-*.json; do
  name=$(basename "$f" .json); name=${name#examples-}; pkg=$(echo "$name" | tr -cd 'a-z0-9')
  "$work/golden-cmd" < "$f" > "$work/golden/$pkg.json"
  echo "-- $name: ogen $(go list -m -f '{{.Version}}' github.com/ogen-go/ogen)"
  go tool ogen --config ogen.yml --target "gen/ogen/$pkg" --package "$pkg" --clean "$f" 2>&1 \
    | grep -v 'not canonical\|Convenient errors are not available' || true
  test -f "gen/ogen/$pkg/oas_client_gen.go" || { echo "ogen generated no client for $name"; exit 1; }
  echo "-- $name: oapi-codegen $(go list -m -f '{{.Version}}' github.com/oapi-codegen/oapi-codegen/v2)"
  mkdir -p "gen/oapi/$pkg"
  go tool oapi-codegen -generate types,client -package "$pkg" -o "gen/oapi/$pkg/client.gen.go" "$f"
  echo "-- $name: openapi-typescript $OPENAPI_TS_VERSION"
  npx --yes "openapi-typescript@$OPENAPI_TS_VERSION" "$f" -o "$work/ts/examples$pkg.d.ts" >/dev/null
done
if [ -n "${CI:-}" ]; then
  echo "-- every served document is its golden file (testdata/NAME.json)"
  if ! diff -r -u testdata "$work/golden"; then
    echo "a served document differs from its golden file (diff above): run bash scripts/openapi-clients/check.sh and commit testdata/"
    exit 1
  fi
else
  rm -f testdata/*.json
  cp "$work/golden"/*.json testdata/
fi

echo "-- go vet and go test of the Go clients against the live examples"
go vet -tags clients ./...
go test -tags clients -count=1 ./...

echo "-- tsc --noEmit over the TypeScript types"
if [ -f testdata/orders.json ]; then cp "$here/typed.ts" "$work/ts/typed.ts"; fi
cat > "$work/ts/package.json" <<JSON
{"private": true, "dependencies": {"openapi-fetch": "$OPENAPI_FETCH_VERSION", "typescript": "$TYPESCRIPT_VERSION"}}
JSON
(cd "$work/ts" && npm install --no-audit --no-fund --silent >/dev/null && npx tsc --noEmit --strict --skipLibCheck --target es2022 --moduleResolution bundler --module esnext ./*.ts)
echo "clients: ogen, oapi-codegen and openapi-typescript typed every document in $docs; the Go clients ran against the live examples"
