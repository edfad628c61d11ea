#!/usr/bin/env bash
# After `make test`: no browser, driver or gateway that a test started may still run. Counts
# headless Chromium started through chromedriver (`--test-type=webdriver`), chromedriver itself,
# and real OpenClaw gateways run from the e2e install directory.
set -u
real_dir="${OPENCLAW_REAL_DIR:-$HOME/.cache/ocui/openclaw-2026.9.6}"
left=$(ps -eo pid=,args= | awk -v dir="$real_dir" '
  /chromium/ && /--test-type=webdriver/ && !/--type=/ { print; next }
  $2 ~ /chromedriver$/ { print; next }
  index($0, dir "/app/node_modules/openclaw") && /gateway run/ { print }')
if [ -n "$left" ]; then
  echo "make test left these processes running (a test started them and did not end them):" >&2
  echo "$left" >&2
  exit 1
fi
echo "[check] no browser, driver or gateway left running"
