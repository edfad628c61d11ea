#!/usr/bin/env bash
# Prints where `make test`'s time went: each tier (scripts/tier.sh), then each e2e module
# (scripts/tests.sh), slowest first.
set -u
[ -f target/test-times.txt ] || exit 0
echo "[times] tiers:"
sed 's/^/  /' target/test-times.txt
if [ -s target/test-e2e-times.txt ]; then
  echo "[times] e2e modules (scripts/tests.sh), slowest first:"
  sort -k2 -rn target/test-e2e-times.txt | sed 's/^/  /'
fi
