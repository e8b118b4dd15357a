#!/bin/sh
# Re-fetches the documentation page's assets that openapi.Mount serves
# (embedded in the module, so the page needs no CDN): Redoc's standalone
# bundle and its licences, from the npm registry with `npm pack`.
#
#	scripts/fetch-docs-assets.sh            # the pinned version
#	REDOC_VERSION=2.5.4 scripts/fetch-docs-assets.sh
#
# Redoc is MIT-licensed; redoc.standalone.js.LICENSE.txt lists the
# licences of what the bundle contains.
set -eu
version=${REDOC_VERSION:-2.5.4}
root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/openapi/assets
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "redoc@$version" >/dev/null && tar xzf redoc-"$version".tgz)
mkdir -p "$dest"
# Without its source map comment: the map is not shipped, and a browser
# asking for it would only log a 404.
sed '/^\/\/# sourceMappingURL=redoc.standalone.js.map$/d' \
	"$tmp/package/bundles/redoc.standalone.js" > "$dest/redoc.standalone.js"
cp "$tmp/package/bundles/redoc.standalone.js.LICENSE.txt" "$dest/redoc.standalone.js.LICENSE.txt"
cp "$tmp/package/LICENSE" "$dest/LICENSE.redoc"
echo "$version" > "$dest/REDOC_VERSION"
ls -l "$dest"
