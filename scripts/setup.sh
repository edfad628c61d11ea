#!/usr/bin/env bash
# Installs everything `make run` and `make test` need, idempotently: each step is
# skipped when the tool is already present at the pinned version. See
# ../shared/docs/toolchain.md for why each pin is what it is.
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=0.2.130
WASM_SPLIT_VERSION=0.2.4
say() { printf '[setup] %s\n' "$*"; }

# 1. OS packages: Chromium + chromedriver for every browser test tier, and Chromium's headless
# shell, the same engine without the desktop browser, which most browser tests drive (it starts
# on a third of the CPU; e2e/src/browser.rs).
# Never Debian's binaryen: its wasm-opt 108 silently produces a broken app.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null || ! command -v chromium-headless-shell >/dev/null; then
  say "installing chromium, chromium-headless-shell and chromium-driver (apt)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-headless-shell chromium-driver >/dev/null
fi

# The local gateway sends Web Push over HTTPS with the system's TLS (OpenSSL, through
# native-tls): its headers and pkg-config to build against it.
if ! pkg-config --exists openssl 2>/dev/null; then
  say "installing libssl-dev and pkg-config (apt)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libssl-dev pkg-config >/dev/null
fi

# 2. The wasm target.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# rustfmt, for make test's format check.
if ! cargo fmt --version >/dev/null 2>&1; then
  say "adding rust component rustfmt"
  rustup component add rustfmt
fi

# 3. Rust tools. wasm-bindgen-cli must NOT be --locked (its webpki-roots pin is unavailable);
# trunk must be 0.21.14 (0.22 needs a newer rustc than the pinned 1.95).
if ! wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $WASM_BINDGEN_VERSION"; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 2 min)"
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi
if ! trunk --version 2>/dev/null | grep -qx "trunk $TRUNK_VERSION"; then
  say "installing trunk $TRUNK_VERSION (about 7 min)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

# The splitter of the app's wasm (scripts/post-build.mjs: views loaded on first use), the one
# cargo-leptos uses; its binary is behind the `build-binary` feature.
if ! cargo install --list 2>/dev/null | grep -qx "wasm_split_cli_support v$WASM_SPLIT_VERSION:" \
   || ! command -v wasm-split-cli >/dev/null; then
  say "installing wasm-split-cli $WASM_SPLIT_VERSION (about 1 min)"
  cargo install wasm_split_cli_support --version "$WASM_SPLIT_VERSION" --features build-binary --locked
fi

# 4. npm: wasm-opt from binaryen 132 and dart-sass, both run by trunk, and zopfli for the wasm's
# gzip'd copy (pinned in package-lock.json).
if ! [ -x node_modules/.bin/wasm-opt ] || ! node_modules/.bin/wasm-opt --version | grep -q 'version 132' \
   || ! [ -x node_modules/.bin/sass ] || ! node_modules/.bin/sass --version | grep -q '^1.108.2' \
   || ! grep -qs '"version": "1.0.15"' node_modules/@gfx/zopfli/package.json; then
  say "installing npm dev dependencies (binaryen 132, sass, zopfli)"
  npm ci --no-audit --no-fund --loglevel=error
fi

# 5. Every crate for every platform: trunk runs `cargo metadata`, which needs them all, and
# builds offline.
cargo fetch --quiet
say "toolchain ready"
