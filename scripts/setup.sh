#!/usr/bin/env bash
# Installs everything `make run` and `make test` need, idempotently: each step is
# skipped when the tool is already present at the pinned version. See
# ../shared/docs/toolchain.md for why each pin is what it is.
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_SPLIT_VERSION=0.2.4
WASM_BINDGEN_VERSION=0.2.130
say() { printf '[setup] %s\n' "$*"; }

# 1. OS packages: Chromium + chromedriver for every browser test tier.
# Never Debian's binaryen: its wasm-opt 108 silently produces a broken app.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  say "installing chromium and chromium-driver (apt)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# 2. The wasm target.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# 2b. std's sources: `make build` rebuilds std for size (see scripts/build-ui.sh).
if ! rustup component list --installed | grep -qx rust-src; then
  say "adding rust component rust-src"
  rustup component add rust-src
fi

# 3. Rust tools. wasm-bindgen-cli must NOT be --locked (webpki-roots pin is unavailable).
if ! wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $WASM_BINDGEN_VERSION"; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 2 min)"
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi
# wasm-split-cli splits the release wasm into the main module and its lazily loaded chunks.
if ! cargo install --list | grep -qx "wasm_split_cli_support v$WASM_SPLIT_VERSION:"; then
  say "installing wasm-split-cli $WASM_SPLIT_VERSION (about 1 min)"
  cargo install wasm_split_cli_support --version "$WASM_SPLIT_VERSION" --locked --features build-binary
fi

# 4. npm: wasm-opt from binaryen 132, dart-sass and terser (pinned in package.json / package-lock.json).
if ! [ -x node_modules/.bin/wasm-opt ] || ! node_modules/.bin/wasm-opt --version | grep -q 'version 132' \
   || ! [ -x node_modules/.bin/sass ] || ! node_modules/.bin/sass --version | grep -q '^1.108.2' \
   || ! [ -x node_modules/.bin/terser ] || ! node_modules/.bin/terser --version | grep -q '^terser 5.51.4'; then
  say "installing npm dev dependencies (binaryen 132, sass, terser)"
  npm ci --no-audit --no-fund --loglevel=error
fi

# 5. Every crate, fetched once up front, so the builds and tests after this need no network...
cargo fetch --quiet
# ...and std's own dependencies for the size-first wasm build.
RUSTC_BOOTSTRAP=1 cargo fetch --quiet -Zbuild-std=std,panic_abort --target wasm32-unknown-unknown
say "toolchain ready"
