#!/usr/bin/env bash
# Runs one tier of `make test` and records how long it took in target/test-times.txt, so
# every run says where its time went (docs/testing.md). Usage: tier.sh NAME COMMAND...
set -uo pipefail
name="$1"; shift
mkdir -p target
start=$(date +%s)
"$@"
rc=$?
printf '%-26s %5d s%s\n' "$name" $(( $(date +%s) - start )) "$([ $rc = 0 ] || echo "  (failed, exit $rc)")" >> target/test-times.txt
exit $rc
