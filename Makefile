# Two commands for a fresh machine:  make run  and  make test.
# Every target installs what it needs first (scripts/setup.sh skips what is present).

SHELL := /bin/bash
export PATH := $(CURDIR)/node_modules/.bin:$(HOME)/.cargo/bin:$(PATH)
export TRUNK_SKIP_VERSION_CHECK := true

PORT ?= 18789
DATA_DIR ?= $(CURDIR)/.data
export PORT DATA_DIR


.PHONY: fmt-check
.PHONY: setup build build-ui-base-path release-builds package gateway run test test-native test-wasm test-e2e clean load bench real-gateway fuzz

setup:
	@bash scripts/setup.sh

## Release UI build into dist/ with trunk (Trunk.toml: offline, pinned wasm-bindgen 0.2.130,
## wasm-opt -Oz from npm binaryen 132, sass, minified). About 1.5 min cold, seconds warm.
## PUBLIC_URL=/ui/ builds for a gateway with `gateway.controlUi.basePath: "/ui"`.
PUBLIC_URL ?= /
## The bundle names dependency sources by crate (`leptos-0.8.23/src/…` in a panic's location),
## not by this machine's home directory: no build-machine path is shipped to every browser, and
## the bytes do not depend on where cargo keeps its registry. (Recursive: set after `setup`
## has fetched the crates.)
REGISTRY_SRC = $(firstword $(wildcard $(or $(CARGO_HOME),$(HOME)/.cargo)/registry/src/index.crates.io-*))
UI_RUSTFLAGS = $(if $(REGISTRY_SRC),--remap-path-prefix=$(REGISTRY_SRC)/=)
## Its own cargo target directory (target/ui), so that `make test` can compile it while the wasm
## tests compile in target/: one cargo build directory admits one build at a time.
UI_TARGET_DIR = $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)/ui
build: setup
	CARGO_TARGET_DIR=$(UI_TARGET_DIR) CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="$(UI_RUSTFLAGS)" trunk build --release --public-url $(PUBLIC_URL)

## Both release builds, one after the other. They share one cargo build directory (the second
## links nothing), and Trunk writes wasm-bindgen's output to one place in it
## (target/ui/wasm-bindgen/release): side by side, one build copied the other's half-written wasm
## and served a module of zeros.
release-builds:
	@bash scripts/tier.sh "release build" $(MAKE) --no-print-directory build
	@bash scripts/tier.sh "release build /ui/" $(MAKE) --no-print-directory build-ui-base-path

## The same build for a gateway with `controlUi.basePath: "/ui"`, for the real-gateway e2e test.
build-ui-base-path: setup
	CARGO_TARGET_DIR=$(UI_TARGET_DIR) CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="$(UI_RUSTFLAGS)" trunk build --release --public-url /ui/ --dist target/dist-ui

## The built UI as an npm package for OpenClaw users (scripts/package.sh): both release builds,
## their checksums and a README in target/package/openclaw-control-ui-rs-<version>.tgz.
package: release-builds
	@bash scripts/package.sh

gateway: setup
	cargo build --profile gateway -p gateway

## Build the UI, start the local gateway with the demo agent on http://127.0.0.1:$(PORT)/,
## and print the URL (with the token). Runs in the foreground until Ctrl-C.
run: build gateway
	UI_ROOT=$(CURDIR)/dist exec target/gateway/gateway

## Every test tier: native, wasm-bindgen-test in headless Chromium, then e2e in Chromium
## against the local gateway and the real OpenClaw gateway.
## Each tier is timed (scripts/tier.sh); the times are printed at the end. Before e2e, three
## chains run side by side (test-before-e2e): the native tests' build then the native tests,
## the wasm tests, and the release builds then the package. Each alone leaves a core idle for
## much of its time (a link, wasm-opt, zopfli and the browser harnesses are single-threaded);
## side by side they fill some of those gaps (docs/performance.md). Each has its own cargo build
## directory: one directory admits one build at a time.
test:
	@rm -f target/test-times.txt target/test-e2e-times.txt
	@T=scripts/tier.sh; \
	$$T setup $(MAKE) --no-print-directory setup && \
	$$T fmt-check $(MAKE) --no-print-directory fmt-check && \
	$$T "builds, native, wasm" $(MAKE) --no-print-directory -j3 --output-sync=target test-before-e2e && \
	$$T e2e $(MAKE) --no-print-directory test-e2e; \
	rc=$$?; bash scripts/test-times.sh; [ $$rc = 0 ] && bash scripts/check-leftovers.sh

.PHONY: test-before-e2e native-chain release-chain
test-before-e2e: native-chain test-wasm release-chain

native-chain:
	@bash scripts/tier.sh "native (build)" bash scripts/tests.sh build
	@bash scripts/tier.sh native $(MAKE) --no-print-directory test-native

release-chain:
	@$(MAKE) --no-print-directory release-builds
	@bash scripts/tier.sh package bash scripts/package.sh

## One formatter (rustfmt.toml): `cargo fmt --all` fixes what this refuses. Then the app's
## layers (scripts/check-layers.sh): io below state below components, and no loop.
fmt-check:
	cargo fmt --all -- --check
	@bash scripts/check-layers.sh

## Native tests of protocol, model and gateway, from the one build the e2e tier shares
## (scripts/tests.sh builds every native and e2e test binary in one cargo invocation).
test-native:
	bash scripts/tests.sh native

## In a cargo build directory of their own (target/wasm-tests), so that they build beside the
## native tests' build in target/.
WASM_TESTS_TARGET_DIR = $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)/wasm-tests
test-wasm:
	@CARGO_TARGET_DIR=$(WASM_TESTS_TARGET_DIR) bash scripts/tier.sh "wasm tests" cargo test --target wasm32-unknown-unknown -p control-ui

## Every e2e module (e2e/tests/flows, one binary), E2E_JOBS (2) at a time with E2E_THREADS (2) tests each (scripts/tests.sh);
## `scripts/tests.sh e2e chat dock` runs only those.
test-e2e: real-gateway
	OPENCLAW_REAL_DIR=$(REAL_DIR) bash scripts/tests.sh e2e

## The gateway's fuzz harness at a million cases (not part of make test, which runs 250,000;
## about 2 minutes once built). FUZZ_SEED=<n> runs another seed's cases.
FUZZ_CASES ?= 1000000
fuzz:
	FUZZ_CASES=$(FUZZ_CASES) cargo test -p gateway --test fuzz -- --nocapture

## Reliability load (not part of make test, about 2 minutes): 200 signed clients for 60 s raise and
## answer questions and send chat messages against the optimised gateway binary over loopback.
## Report: target/reliability/load.md (throughput, p50/p99, peak RSS, lost and duplicated events).
LOAD_CLIENTS ?= 200
LOAD_SECONDS ?= 60
load:
	cargo build --profile gateway -p gateway --bins
	$${CARGO_TARGET_DIR:-target}/gateway/loadgen --clients $(LOAD_CLIENTS) --seconds $(LOAD_SECONDS) --out target/reliability/load.md

clean:
	cargo clean
	rm -rf dist

## The real OpenClaw gateway (npm `openclaw`, with its Node 24), installed once into a cache.
REAL_DIR ?= $(HOME)/.cache/ocui/openclaw-2026.9.6
## An install cut off half way (its node_modules incomplete: `npm ls` finds a package missing or
## invalid) is removed and done again; the install script alone would skip it, as its openclaw
## package is there.
real-gateway:
	@R="$(REAL_DIR)"; \
	if [ -d "$$R/app/node_modules" ] && [ -x "$$R/node/package/bin/node" ] \
	   && ! (cd "$$R/app" && PATH="$$R/node/package/bin:$$PATH" npm ls --all >/dev/null 2>&1); then \
	  echo "[real-gateway] the install in $$R/app is incomplete (npm ls); installing it again"; \
	  rm -rf "$$R/app/node_modules" "$$R/app/package-lock.json"; \
	fi; \
	[ -x "$$R/node/package/bin/node" ] && [ -f "$$R/app/node_modules/openclaw/openclaw.mjs" ] \
	  || bash scripts/real-gateway.sh "$$R" install

## Benchmarks (not part of make test, about 4 minutes with the builds warm): our UI beside the incumbent Control UI on
## the real gateway, plus our gateway, in headless Chromium. Prints a markdown table and writes
## target/bench/bench.md. BENCH_ARGS="--runs 7 --only 1,2,3,4,5,6 --rt-seconds 10" narrows or widens it.
BENCH_ARGS ?=
bench: build gateway real-gateway
	cargo build --profile gateway -p e2e --bin scripted-model
	OPENCLAW_REAL_DIR=$(REAL_DIR) "$(REAL_DIR)/node/package/bin/node" bench/bench.mjs $(BENCH_ARGS)
