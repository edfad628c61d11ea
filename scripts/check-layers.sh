#!/usr/bin/env bash
# The app's layers, checked on every `make test` (docs/testing.md):
# 1. only src/io/ imports the network and IndexedDB crates, or reads the address bar's query;
# 2. src/io/ knows nothing of the controllers or the views;
# 3. no two modules of src/state/ and src/io/ depend on each other, however indirectly
#    (tsort finds the loop).
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
edges=$(for f in $(find src/state src/io -name '*.rs' | sort); do
  from=$(module_of "$f")
  grep -ohE 'crate::(state|io)::[a-z_]+' "$f" | sed 's/^crate:://' | sort -u | while read -r to; do
    [ "$to" != "$from" ] && echo "$from $to"
  done
done)
if ! echo "$edges" | tsort >/dev/null 2>/tmp/ocui-tsort.$$; then
  echo "[layers] these modules depend on each other in a loop:" >&2
  cat /tmp/ocui-tsort.$$ >&2
  fail=1
fi
rm -f /tmp/ocui-tsort.$$
[ $fail = 0 ] && echo "[layers] io below state below components; no loop among $(echo "$edges" | wc -l) module dependencies"
exit $fail
