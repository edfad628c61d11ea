#!/usr/bin/env bash
# The built UI as an npm package (`make package`): an OpenClaw user installs it with
# `npm install <tarball>` and points `gateway.controlUi.root` at its `dist/` (or `dist-ui/` with
# `gateway.controlUi.basePath: "/ui"`). No Rust toolchain on their side.
#
# Packs the two release builds as they are (`make release-builds`: dist/ and target/dist-ui/),
# their SHA-256 sums, `packaging/package.json` and `packaging/README.md` with this version.
# Prints the tarball's path. Needs nothing from the network (`npm pack` of a local folder).
set -euo pipefail
cd "$(dirname "$0")/.."

root=dist
based=target/dist-ui
for build in "$root" "$based"; do
  if ! [ -f "$build/index.html" ]; then
    echo "package: no build in $build/: run \`make release-builds\` first (\`make package\` does)" >&2
    exit 1
  fi
done

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
if [ -z "$version" ]; then
  echo "package: no version in Cargo.toml's [package]" >&2
  exit 1
fi
name=$(node -p 'require("./packaging/package.json").name')
out=target/package
stage=$out/stage
rm -rf "$stage"
mkdir -p "$stage"
# Copies, not links: the gateway refuses hard-linked files under controlUi.root.
cp -R "$root" "$stage/dist"
cp -R "$based" "$stage/dist-ui"
sed "s/@VERSION@/$version/g" packaging/README.md > "$stage/README.md"
node -e '
  const fs = require("fs");
  const pkg = JSON.parse(fs.readFileSync("packaging/package.json", "utf8"));
  pkg.version = process.argv[1];
  fs.writeFileSync(process.argv[2], JSON.stringify(pkg, null, 2) + "\n");
' "$version" "$stage/package.json"
(cd "$stage" && find dist dist-ui -type f | LC_ALL=C sort | xargs sha256sum > SHA256SUMS)

rm -f "$out/$name-"*.tgz
tarball=$(cd "$stage" && npm pack --silent --pack-destination .. 2>/dev/null | tail -n 1)
if ! [ -f "$out/$tarball" ]; then
  echo "package: npm pack wrote no tarball" >&2
  exit 1
fi
echo "$out/$tarball"
