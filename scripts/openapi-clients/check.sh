#!/usr/bin/env bash
# Generates a client with each of the three generators fx's documents are
# held to (docs/openapi.md, "Clients") from every OpenAPI document in DIR
# (the examples' served documents: FX_OPENAPI_OUT=DIR go test -run
# '^TestDocument$' ./examples/...), as served, with no flags that skip
# what a generator cannot handle, and compiles each:
#   - ogen (Go), then the orders client against typed_ogen.go.txt;
#   - oapi-codegen (Go, types + client with responses), then the orders
#     client against typed_oapi.go.txt;
#   - openapi-typescript + openapi-fetch, type-checked by tsc, the orders
#     types against typed.ts.
# The typed_* files fail to compile unless every error response of the
# orders example decodes into a typed value (code enum, message, details
# typed per code). Versions are pinned here; npx caches in ~/.npm.
#   usage: scripts/openapi-clients/check.sh DIR
set -euo pipefail
OGEN_VERSION=v1.24.0
OAPI_CODEGEN_VERSION=v2.8.2
OPENAPI_TS_VERSION=7.13.0
OPENAPI_FETCH_VERSION=0.17.0
TYPESCRIPT_VERSION=5.9.3
here=$(cd "$(dirname "$0")" && pwd)
docs=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export GOWORK=off GOFLAGS=-mod=mod
printf 'module clients\n\ngo 1.26.0\n' > go.mod
for f in "$docs"/*.json; do
  name=$(basename "$f" .json); pkg=$(echo "$name" | tr -cd 'a-z0-9')
  echo "-- $name: ogen $OGEN_VERSION"
  go run "github.com/ogen-go/ogen/cmd/ogen@$OGEN_VERSION" --target "ogen/$pkg" --package "$pkg" --clean "$f" 2>&1 \
    | grep -v 'not canonical\|Convenient errors are not available' || true
  test -f "ogen/$pkg/oas_client_gen.go" || { echo "ogen generated no client for $name"; exit 1; }
  echo "-- $name: oapi-codegen $OAPI_CODEGEN_VERSION"
  mkdir -p "oapi/$pkg"
  go run "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@$OAPI_CODEGEN_VERSION" \
    -generate types,client -package "$pkg" -o "oapi/$pkg/client.gen.go" "$f"
  echo "-- $name: openapi-typescript $OPENAPI_TS_VERSION"
  mkdir -p ts
  npx --yes "openapi-typescript@$OPENAPI_TS_VERSION" "$f" -o "ts/$pkg.d.ts" >/dev/null
done
if [ -f "$docs/examples-orders.json" ]; then
  mkdir -p typed && cp "$here/typed_ogen.go.txt" typed/ogen_test.go && cp "$here/typed_oapi.go.txt" typed/oapi_test.go
  cp "$here/typed.ts" ts/typed.ts
fi
echo "-- go build and vet of the generated Go clients"
go get github.com/ogen-go/ogen@$OGEN_VERSION github.com/oapi-codegen/runtime >/dev/null 2>&1 || true
go mod tidy >/dev/null
go vet ./...
echo "-- tsc --noEmit over the TypeScript types"
cat > ts/package.json <<JSON
{"private": true, "dependencies": {"openapi-fetch": "$OPENAPI_FETCH_VERSION", "typescript": "$TYPESCRIPT_VERSION"}}
JSON
(cd ts && npm install --no-audit --no-fund --silent >/dev/null && npx tsc --noEmit --strict --skipLibCheck --target es2022 --moduleResolution bundler --module esnext ./*.ts)
echo "clients: ogen, oapi-codegen and openapi-typescript typed every document in $docs"
