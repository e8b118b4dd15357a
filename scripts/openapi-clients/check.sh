#!/usr/bin/env bash
# Regenerates the clients of the examples' OpenAPI documents with each of
# the generators fx's documents are held to (docs/openapi.md, "Clients"),
# as served, with no flags that skip what a generator cannot handle, and
# proves them:
#   - ogen and oapi-codegen (Go; versions pinned by the `tool` lines of
#     this folder's go.mod, run with `go tool`): the document of
#     examples/NAME is kept as testdata/NAME.json and its clients written
#     to gen/ogen/NAME and gen/oapi/NAME (committed; with CI set, a
#     difference from what is committed fails: run this script and commit
#     its output). Then `go vet` and `go test` of this module, which build
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
rm -rf gen testdata/*.json
mkdir -p testdata "$work/ts"
for f in "$docs"/examples-*.json; do
  name=$(basename "$f" .json); name=${name#examples-}; pkg=$(echo "$name" | tr -cd 'a-z0-9')
  cp "$f" "testdata/$pkg.json"
  echo "-- $name: ogen $(go list -m -f '{{.Version}}' github.com/ogen-go/ogen)"
  go tool ogen --config ogen.yml --target "gen/ogen/$pkg" --package "$pkg" --clean "testdata/$pkg.json" 2>&1 \
    | grep -v 'not canonical\|Convenient errors are not available' || true
  test -f "gen/ogen/$pkg/oas_client_gen.go" || { echo "ogen generated no client for $name"; exit 1; }
  echo "-- $name: oapi-codegen $(go list -m -f '{{.Version}}' github.com/oapi-codegen/oapi-codegen/v2)"
  mkdir -p "gen/oapi/$pkg"
  go tool oapi-codegen -generate types,client -package "$pkg" -o "gen/oapi/$pkg/client.gen.go" "testdata/$pkg.json"
  echo "-- $name: openapi-typescript $OPENAPI_TS_VERSION"
  npx --yes "openapi-typescript@$OPENAPI_TS_VERSION" "$f" -o "$work/ts/examples$pkg.d.ts" >/dev/null
done
if [ -n "${CI:-}" ]; then
  echo "-- the committed clients are the ones the served documents give"
  if [ -n "$(git status --porcelain -- .)" ]; then
    git status --short -- .; git diff --stat -- .
    echo "the generated clients are stale: run bash scripts/openapi-clients/check.sh and commit its output"
    exit 1
  fi
fi

echo "-- go vet and go test of the Go clients against the live examples"
go vet ./...
go test -count=1 ./...

echo "-- tsc --noEmit over the TypeScript types"
if [ -f testdata/orders.json ]; then cp "$here/typed.ts" "$work/ts/typed.ts"; fi
cat > "$work/ts/package.json" <<JSON
{"private": true, "dependencies": {"openapi-fetch": "$OPENAPI_FETCH_VERSION", "typescript": "$TYPESCRIPT_VERSION"}}
JSON
(cd "$work/ts" && npm install --no-audit --no-fund --silent >/dev/null && npx tsc --noEmit --strict --skipLibCheck --target es2022 --moduleResolution bundler --module esnext ./*.ts)
echo "clients: ogen, oapi-codegen and openapi-typescript typed every document in $docs; the Go clients ran against the live examples"
