#!/usr/bin/env bash
# The e2e tier: builds every e2e test binary once, then runs them E2E_JOBS at a time (each with
# E2E_THREADS test threads). Each test starts its own browser, driver, local gateway (free port,
# temporary data dir) and real gateway (its own directory), so binaries do not share state.
# Every binary's output is kept in target/e2e-logs/<name>.log; a failing one's is printed whole.
# The time of each binary goes to target/test-e2e-times.txt (scripts/test-times.sh prints it).
# Usage: scripts/e2e.sh [binary ...]   (default: all)
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS="${E2E_JOBS:-3}"
THREADS="${E2E_THREADS:-2}"
logs=target/e2e-logs
rm -rf "$logs"; mkdir -p "$logs"; : > target/test-e2e-times.txt

# Build once; cargo names each test binary's executable in its JSON messages.
cargo test -p e2e --no-run --message-format=json-render-diagnostics > "$logs/build.json" || { echo "[e2e] build failed" >&2; exit 1; }
mapfile -t exes < <(grep -o '"executable":"[^"]*"' "$logs/build.json" | sed 's/"executable":"//; s/"$//' | grep '/deps/' | sort -u)
declare -A exe_of
for e in "${exes[@]}"; do n=$(basename "$e"); exe_of[${n%-*}]=$e; done
# The longest first, so the pool ends together (order from the last measured run, docs/testing.md).
order=(approvals real_gateway real_gateway_outbox chat async_questions dock hostile_ui panes attachments real_gateway_transcript
  dock_recovery connection offline credential_guard attention transcript_parts upgrade budgets)
if [ $# -gt 0 ]; then order=("$@"); fi
for n in "${!exe_of[@]}"; do [[ " ${order[*]} " == *" $n "* ]] || order+=("$n"); done
[ $# -gt 0 ] || [ ${#order[@]} -eq ${#exe_of[@]} ] || { echo "[e2e] a listed binary does not exist: ${order[*]}" >&2; exit 1; }

run_one() {
  local n=$1 exe=$2 start rc
  start=$(date +%s)
  (cd e2e && "$exe" --test-threads="$THREADS") > "$logs/$n.log" 2>&1
  rc=$?
  printf '%-26s %4d s  %s\n' "$n" $(( $(date +%s) - start )) "$([ $rc = 0 ] && echo ok || echo "FAILED (exit $rc)")" | tee -a target/test-e2e-times.txt
  return $rc
}
export -f run_one
export logs THREADS
for n in "${order[@]}"; do echo "$n ${exe_of[$n]}"; done \
  | xargs -P "$JOBS" -L 1 bash -c 'run_one "$0" "$1"'
rc=$?
failed=$(grep -c FAILED target/test-e2e-times.txt)
if [ "$rc" != 0 ] || [ "$failed" != 0 ]; then
  for f in $(grep FAILED target/test-e2e-times.txt | awk '{print $1}'); do
    echo "===== $f (target/e2e-logs/$f.log) =====" >&2
    cat "$logs/$f.log" >&2
  done
  echo "[e2e] $failed of ${#order[@]} binaries failed" >&2
  exit 1
fi
echo "[e2e] all ${#order[@]} binaries passed ($(grep -h '^test result' "$logs"/*.log | awk '{s+=$4} END {print s}') tests)"
