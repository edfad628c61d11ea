#!/usr/bin/env bash
# Prints where `make test`'s time went: each tier (scripts/tier.sh), then each e2e binary
# as cargo reported it, slowest first.
set -u
[ -f target/test-times.txt ] || exit 0
echo "[times] tiers:"
sed 's/^/  /' target/test-times.txt
if [ -f target/test-e2e.log ]; then
  echo "[times] e2e binaries:"
  awk '/^ *Running tests\// { bin = $2 } /^test result:/ { for (i = 1; i <= NF; i++) if ($i == "in") t = $(i+1); printf "  %-40s %s\n", bin, t }' target/test-e2e.log | sort -k2 -rn
fi
