#!/usr/bin/env bash
# The app's layers, checked on every `make test` (docs/testing.md):
# 1. only src/io/ imports the network and IndexedDB crates, or reads the address bar's query;
# 2. src/io/ knows nothing of the controllers or the views;
# 3. no two modules of src/state/ and src/io/ depend on each other, however indirectly, and no
#    two views of src/components/ either (tsort finds the loop; a view's `super::x` is the view
#    `components::x`);
# 4. no two modules of the gateway depend on each other, however indirectly.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0

outside_io=$(grep -rnE 'gloo_net|indexed_db_futures|UrlSearchParams|js_sys::(encode|decode)_uri' src --include=*.rs | grep -v '^src/io/' || true)
if [ -n "$outside_io" ]; then
  echo "[layers] only src/io/ may talk to the network, IndexedDB or the address bar's query:" >&2
  echo "$outside_io" >&2
  fail=1
fi

upward=$(grep -rnE 'crate::(state|components|app)\b' src/io --include=*.rs || true)
if [ -n "$upward" ]; then
  echo "[layers] src/io/ must not depend on controllers or views:" >&2
  echo "$upward" >&2
  fail=1
fi

# Module of a file: src/state/outbox/send.rs -> state::outbox, src/io/tabs.rs -> io::tabs.
module_of() { local p=${1#src/}; p=${p%.rs}; p=${p%/mod}; echo "$p" | awk -F/ '{print $1 "::" $2}'; }
edges=$(for f in $(find src/state src/io src/components -name '*.rs' | sort); do
  from=$(module_of "$f")
  {
    grep -ohE 'crate::(state|io|components)::[a-z_]+' "$f" | sed 's/^crate:://'
    case $f in src/components/*) grep -ohE '\bsuper::[a-z_]+' "$f" | sed 's/^super::/components::/' ;; esac
  } | sort -u | while read -r to; do
    [ "$to" != "$from" ] && [ "$to" != "components::super" ] && echo "$from $to"
  done
done)
if ! echo "$edges" | tsort >/dev/null 2>/tmp/ocui-tsort.$$; then
  echo "[layers] these modules depend on each other in a loop:" >&2
  cat /tmp/ocui-tsort.$$ >&2
  fail=1
fi

# 4. The gateway's modules (gateway/src/<module>.rs or <module>/…) depend on each other without a
#    loop: shared rules sit below the features that use them (`hub`, `session_events`, `stop`,
#    `admission`, `store`). Comments are left out; `crate::{a, b}` counts for both.
gateway_edges=$(for f in $(find gateway/src -name '*.rs' ! -path 'gateway/src/bin/*' | sort); do
  p=${f#gateway/src/}; from=${p%%/*}; from=${from%.rs}
  case $from in lib|main) continue ;; esac
  text=$(sed 's://.*$::' "$f" | tr '\n' ' ')
  {
    echo "$text" | grep -oE 'crate::[a-z_]+' | sed 's/^crate:://' || true
    echo "$text" | grep -oE 'crate::\{[^}]*\}' | sed 's/^crate::{//; s/}$//' | tr ',' '\n' | sed 's/^ *//; s/::.*//; s/ .*//' | grep -E '^[a-z_]+$' || true
  } | sort -u | while read -r to; do
    [ "$to" != "$from" ] && echo "$from $to"
  done
done)
if ! echo "$gateway_edges" | tsort >/dev/null 2>/tmp/ocui-tsort.$$; then
  echo "[layers] these modules of the gateway depend on each other in a loop:" >&2
  cat /tmp/ocui-tsort.$$ >&2
  fail=1
fi
rm -f /tmp/ocui-tsort.$$
[ $fail = 0 ] && echo "[layers] io below state below components; no loop among $(echo "$edges" | wc -l) module dependencies of the app, nor among $(echo "$gateway_edges" | wc -l) of the gateway"
exit $fail
