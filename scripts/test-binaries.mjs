// Reads `cargo test --no-run --message-format=json` on stdin and prints one line per test
// binary: "<package> <target> <package dir> <executable>". scripts/tests.sh runs them, so the
// native and e2e tiers share one build (two cargo invocations with different package sets
// resolve different dependency features, and rebuild most of the tree).
import { createInterface } from "node:readline";
import { basename, dirname } from "node:path";
const seen = new Set();
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.startsWith("{")) continue;
  const m = JSON.parse(line);
  if (m.reason !== "compiler-artifact" || !m.executable || !m.profile?.test) continue;
  if (seen.has(m.executable)) continue;
  seen.add(m.executable);
  // `path+file:///…/gateway#0.1.0`, or `…#name@0.1.0` when the directory is named otherwise.
  const pkg = m.package_id.match(/#([^@#]+)@/)?.[1] ?? basename(dirname(m.manifest_path));
  console.log(`${pkg} ${m.target.name} ${dirname(m.manifest_path)} ${m.executable}`);
}
