#!/usr/bin/env bash
# Test binaries from one build: `scripts/tests.sh build` compiles every test of protocol, model,
# gateway and e2e in one cargo invocation (two invocations with different package sets resolve
# different dependency features and rebuild most of the tree); `native` runs the first three's
# binaries two at a time; `e2e [name ...]` runs the e2e binaries E2E_JOBS (2) at a time, each
# with E2E_THREADS (2) test threads. Each e2e test starts its own browser, driver, local gateway
# (free port, temporary data dir) and real gateway (its own directory), so binaries share nothing.
# Every binary's output is kept in target/test-logs/<name>.log and a failing one's is printed
# whole; each e2e binary's time goes to target/test-e2e-times.txt (scripts/test-times.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
logs=target/test-logs
list=target/test-binaries.txt
mode="${1:-}"; shift || true
case "$mode" in build | native | e2e) ;; *) echo "usage: $0 build | native | e2e [binary ...]" >&2; exit 2 ;; esac

build() {
  mkdir -p "$logs"
  cargo test -p protocol -p model -p gateway -p e2e --no-run --message-format=json-render-diagnostics > "$logs/build.json" \
    || { echo "[tests] build failed" >&2; exit 1; }
  node scripts/test-binaries.mjs < "$logs/build.json" > "$list"
  echo "[tests] built $(wc -l < "$list") test binaries"
}

# Always (re)built first: a no-op when nothing changed, and never a stale binary.
build
[ "$mode" = build ] && exit 0

run_one() { # name dir exe threads
  local start rc
  start=$(date +%s)
  (cd "$2" && "$3" --test-threads="$4") > "$logs/$1.log" 2>&1
  rc=$?
  printf '%-26s %4d s  %s\n' "$1" $(( $(date +%s) - start )) "$([ $rc = 0 ] && echo ok || echo "FAILED (exit $rc)")"
  return $rc
}
export -f run_one
export logs

report_failures() { # times-file
  local f
  for f in $(grep FAILED "$1" | awk '{print $1}'); do
    echo "===== $f (target/test-logs/$f.log) =====" >&2
    cat "$logs/$f.log" >&2
  done
}

if [ "$mode" = native ]; then
  # Two at a time, the gateway's fuzz harness (the longest by far) first, so the others all run
  # beside it instead of one of them being left to run alone at the end.
  : > target/test-native-times.txt
  grep -v '^e2e ' "$list" | awk '$2 == "fuzz" { print; next } { rest = rest $0 "\n" } END { printf "%s", rest }' \
    | while read -r pkg name dir exe; do echo "$pkg-$name $dir $exe $(nproc)"; done \
    | xargs -P 2 -L 1 bash -c 'run_one "$0" "$1" "$2" "$3"' | tee -a target/test-native-times.txt
  failed=$(grep -c FAILED target/test-native-times.txt)
  [ "$failed" = 0 ] || { report_failures target/test-native-times.txt; echo "[native] $failed binaries failed" >&2; exit 1; }
  echo "[native] $(wc -l < target/test-native-times.txt) binaries passed ($(cat "$logs"/{protocol,model,gateway}-*.log | grep -h '^test result' | awk '{s+=$4} END {print s}') tests)"
  exit 0
fi

# Two at a time: with three, the real gateways (Node) and browsers of six tests on two cores
# were slow enough to fail deadlines and drop idle backend sockets.
JOBS="${E2E_JOBS:-2}"
THREADS="${E2E_THREADS:-2}"
: > target/test-e2e-times.txt
declare -A exe_of dir_of
while read -r pkg name dir exe; do
  [ "$pkg" = e2e ] && [ "$name" != e2e ] && { exe_of[$name]=$exe; dir_of[$name]=$dir; }
done < "$list"
# The longest first, so the pool ends together (order from the last measured run, docs/testing.md).
order=(real_runs approvals conversations real_gateway real_gateway_outbox conversation_tools reach chat async_questions package dock hostile_ui panes attachments
  real_gateway_transcript dock_recovery connection gateway_stores offline credential_guard attention transcript_parts upgrade budgets)
if [ $# -gt 0 ]; then order=("$@"); fi
for n in "${order[@]}"; do [ -n "${exe_of[$n]:-}" ] || { echo "[e2e] no such e2e binary: $n" >&2; exit 2; }; done
if [ $# -eq 0 ]; then for n in "${!exe_of[@]}"; do [[ " ${order[*]} " == *" $n "* ]] || order+=("$n"); done; fi
for n in "${order[@]}"; do echo "$n ${dir_of[$n]} ${exe_of[$n]} $THREADS"; done \
  | xargs -P "$JOBS" -L 1 bash -c 'run_one "$0" "$1" "$2" "$3"' | tee -a target/test-e2e-times.txt
failed=$(grep -c FAILED target/test-e2e-times.txt)
if [ "$failed" != 0 ]; then
  report_failures target/test-e2e-times.txt
  echo "[e2e] $failed of ${#order[@]} binaries failed" >&2
  exit 1
fi
echo "[e2e] ${#order[@]} binaries passed ($(for n in "${order[@]}"; do grep -h '^test result' "$logs/$n.log"; done | awk '{s+=$4} END {print s}') tests)"
