#!/usr/bin/env bash
# Release build of the UI into dist/: the wasm split into a main module and lazily loaded
# chunks, then wasm-bindgen, wasm-opt, terser, sass, and a gzip -9 copy of every asset (the
# local gateway serves those to browsers that take gzip). `make build` runs this after setup.
#
# Steps, and why this is not trunk: trunk cannot split a wasm module.
#  1. cargo build of the `app` bin for wasm32, with std rebuilt for size (std's
#     `optimize_for_size` and `-Cpanic=immediate-abort`: unstable options of the pinned stable
#     toolchain, unlocked by RUSTC_BOOTSTRAP for this one build; about 35 KB gzip) and with
#     `--emit-relocs`, which wasm-split-cli needs to move code between modules;
#     `--cfg ocui_split` turns on the split points (src/deferred_views.rs).
#  2. wasm-split-cli: every function reachable only from a split point moves to that chunk.
#  3. wasm-bindgen on the main module (--keep-lld-exports: the chunks link against them).
#  4. wasm-opt -Oz (npm binaryen 132) on every module, dropping the unused wasm-streams exports
#     (scripts/drop-stream-exports.mjs); scripts/assemble-dist.mjs then checks the glue against
#     the exports, names the files by content hash, minifies the JS and writes index.html.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"

work=target/ui-build
wasm=target/wasm32-unknown-unknown/release/app.wasm

RUSTC_BOOTSTRAP=1 CARGO_UNSTABLE_BUILD_STD=std,panic_abort CARGO_UNSTABLE_BUILD_STD_FEATURES=optimize_for_size \
RUSTFLAGS="--cfg erase_components --cfg ocui_split -Zunstable-options -Cpanic=immediate-abort -Clink-args=--emit-relocs" \
  cargo build --release --target wasm32-unknown-unknown --bin app

# The steps below take about 10 s; skip them when nothing they read has changed.
# The stamp covers the files by name and content, and the tools' versions.
stamp=$( {
  sha256sum "$wasm" index.html package-lock.json scripts/setup.sh scripts/build-ui.sh scripts/*.mjs $(find style src -name '*.scss' | sort)
  wasm-bindgen --version; wasm-opt --version; cargo install --list | grep '^wasm_split_cli_support '
} | sha256sum | cut -c1-64)
if [ -f dist/index.html ] && [ "$(cat "$work/stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "dist/ is up to date"
  exit 0
fi
rm -rf "$work" && mkdir -p "$work/split" "$work/bindgen" "$work/out"

wasm-split-cli --target web --out-name app "$wasm" "$work/split"
wasm-bindgen --target web --keep-lld-exports --no-typescript --out-dir "$work/bindgen" --out-name app "$work/split/app.wasm"
# assemble-dist.mjs knows these two files; JS snippets (`#[wasm_bindgen(module = ...)]`) would
# need copying too, so their appearance stops the build instead of shipping a page that 404s.
if [ "$(ls "$work/bindgen" | tr '\n' ' ')" != "app.js app_bg.wasm " ]; then
  echo "build-ui: wasm-bindgen wrote more than app.js and app_bg.wasm: $(ls "$work/bindgen")" >&2
  exit 1
fi

# Leptos links wasm-streams' three JS-facing classes, which a client-side app never uses.
node scripts/drop-stream-exports.mjs "$work/bindgen/app.js"
# (Passes run in command-line order: the exports go first, so -Oz removes the code behind them.)
wasm-opt --remove-exports --pass-arg='remove-exports@*intounderlying*' -Oz \
  "$work/bindgen/app_bg.wasm" -o "$work/out/app_bg.wasm"
for chunk in "$work"/split/*.wasm; do
  name=$(basename "$chunk")
  [ "$name" = app.wasm ] && continue
  # The chunks carry no function names worth keeping; binaryen warns about lld's extra
  # name subsections, which it drops anyway.
  wasm-opt -Oz "$chunk" -o "$work/out/$name" 2> >(grep -v 'unknown name subsection' >&2)
done
cp "$work/bindgen/app.js" "$work/out/app.js"
cp "$work/split/__wasm_split.js" "$work/out/__wasm_split.js"
sass --no-source-map --style=compressed style/main.scss "$work/out/main.css"

rm -rf dist && mkdir -p dist
node scripts/assemble-dist.mjs "$work/out" dist
gzip -9 -k -f dist/*.wasm dist/*.js dist/*.css
echo "$stamp" > "$work/stamp"
