#!/usr/bin/env bash
# Test binaries from one build: `scripts/tests.sh build` compiles every test of protocol, model,
# gateway and e2e in one cargo invocation (two invocations with different package sets resolve
# different dependency features and rebuild most of the tree); `native` runs the first three's
# binaries two at a time; `e2e [module ...]` runs the modules of the e2e flows binary
# (e2e/tests/flows) E2E_JOBS (2) at a time, each with E2E_THREADS (2) test threads. Each e2e test
# starts its own browser, driver, local gateway (free port, temporary data dir) and real gateway
# (its own directory), so modules share nothing. Every binary's or module's output is kept in
# target/test-logs/<name>.log and a failing one's is printed whole; each e2e module's time goes
# to target/test-e2e-times.txt (scripts/test-times.sh).
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

run_one() { # name dir exe threads [filter]
  local start rc
  start=$(date +%s)
  (cd "$2" && "$3" --test-threads="$4" ${5:+"$5"}) > "$logs/$1.log" 2>&1
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
# Every flow is a module of one binary, e2e/tests/flows (one compile, one link); each module
# runs as a job of its own, `<module>::` as the binary's filter, and is named after the module.
read -r _ _ flows_dir flows_exe < <(awk '$1 == "e2e" && $2 == "flows"' "$list")
[ -n "${flows_exe:-}" ] || { echo "[e2e] no e2e flows binary in $list" >&2; exit 2; }
mapfile -t modules < <("$flows_exe" --list --format terse 2>/dev/null | sed -n 's/^\([a-z_0-9]*\)::.*: test$/\1/p' | sort -u)
# A filter is a substring: a module named as the end of another (`outbox`, `real_gateway_outbox`)
# would run the other's tests too.
for a in "${modules[@]}"; do for b in "${modules[@]}"; do
  [[ "$b" == *"_$a" ]] && { echo "[e2e] module $a is the end of module $b: rename one (a filter is a substring)" >&2; exit 2; }
done; done
# The longest first, so the pool ends together (order from the last measured run, docs/testing.md).
order=(real_runs approvals conversations real_gateway conversation_tools reach real_gateway_outbox consent real_gateway_transcript run_settings package chat offline async_questions
  credential_guard dock transcript_parts panes attachments connection gateway_stores attention hostile_ui dock_recovery upgrade budgets)
if [ $# -gt 0 ]; then order=("$@"); fi
for n in "${order[@]}"; do [[ " ${modules[*]} " == *" $n "* ]] || { echo "[e2e] no such e2e module: $n" >&2; exit 2; }; done
if [ $# -eq 0 ]; then for n in "${modules[@]}"; do [[ " ${order[*]} " == *" $n "* ]] || order+=("$n"); done; fi
# The e2e package's other test binaries (its helpers' own tests) run first, each as one job.
others=()
if [ $# -eq 0 ]; then
  while read -r pkg name dir exe; do
    [ "$pkg" = e2e ] && [ "$name" != flows ] && others+=("$name $dir $exe $THREADS")
  done < "$list"
fi
{ for o in "${others[@]}"; do echo "$o"; done; for n in "${order[@]}"; do echo "$n $flows_dir $flows_exe $THREADS $n::"; done; } \
  | xargs -P "$JOBS" -L 1 bash -c 'run_one "$0" "$1" "$2" "$3" "$4"' | tee -a target/test-e2e-times.txt
failed=$(grep -c FAILED target/test-e2e-times.txt)
if [ "$failed" != 0 ]; then
  report_failures target/test-e2e-times.txt
  echo "[e2e] $failed of $(wc -l < target/test-e2e-times.txt) jobs failed" >&2
  exit 1
fi
echo "[e2e] ${#order[@]} modules passed ($(for n in "${order[@]}"; do grep -h '^test result' "$logs/$n.log"; done | awk '{s+=$4} END {print s}') tests)"
