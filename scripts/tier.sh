#!/usr/bin/env bash
# Runs one tier of `make test` and records how long it took in target/test-times.txt, so
# every run says where its time went (docs/testing.md). Usage: tier.sh NAME COMMAND...
# The e2e tier's output is also kept, for the per-binary times cargo prints.
set -uo pipefail
name="$1"; shift
mkdir -p target
start=$(date +%s)
if [ "$name" = e2e ]; then
  "$@" 2>&1 | tee target/test-e2e.log
  rc=${PIPESTATUS[0]}
else
  "$@"
  rc=$?
fi
printf '%-22s %5d s%s\n' "$name" $(( $(date +%s) - start )) "$([ $rc = 0 ] || echo "  (failed, exit $rc)")" >> target/test-times.txt
exit $rc
