#!/usr/bin/env bash
# After `make test`: no browser, driver or gateway that a test started may still run. Counts
# headless Chromium started through chromedriver (`--test-type=webdriver`), chromedriver itself,
# and real OpenClaw gateways (each e2e test runs its own, from a directory linked to the install).
set -u
left=$(ps -eo pid=,args= | awk '
  /chromium/ && /--test-type=webdriver/ && !/--type=/ { print; next }
  $2 ~ /chromedriver$/ { print; next }
  /app\/node_modules\/openclaw\/openclaw.mjs gateway run/ { print }')
if [ -n "$left" ]; then
  echo "make test left these processes running (a test started them and did not end them):" >&2
  echo "$left" >&2
  exit 1
fi
echo "[check] no browser, driver or gateway left running"
