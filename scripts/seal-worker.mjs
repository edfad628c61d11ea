// Seals the service worker of a build to its page: writes into `<dir>/sw.js` the SHA-384 of
// `<dir>/index.html`'s exact bytes and the SHA-256 of each of its inline scripts (what its CSP
// allows), on the worker's `const BUILD = …;` line. The worker (public/sw.js) serves its cached
// page only if it hashes to that value, and serves it with a CSP built from those hashes: the
// page is the root of the worker's trust (it names the hashes of every other file it keeps),
// and nothing a same-origin script can write (the Cache Storage) may stand in for it.
//
// Run by scripts/post-build.mjs as its last step, on the page it wrote, so the hash is of the
// final page. There is no cycle: the page never names the worker (the app registers it by
// name, and the page's `<meta name=ocui-files>` lists no `sw.js`; checked below).
// Also a command, for a test that changes a copy of the build: `node scripts/seal-worker.mjs <dir>`.
//
// The worker's own comments go (whole comment lines only): every first visit fetches it,
// uncompressed from the real gateway. The source in public/ keeps them.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Script } from "node:vm";

const fail = (message) => {
  throw new Error(`seal-worker: ${message}`);
};

// The inline scripts' SHA-256s, found as the real gateway finds them for its CSP
// (`computeInlineScriptHashes`: every `<script>` without a `src` attribute and with content).
export function inlineScriptHashes(html) {
  const out = [];
  for (const m of html.matchAll(/<script(?:\s[^>]*)?>([^]*?)<\/script>/gi)) {
    const open = m[0].slice(0, m[0].indexOf(">") + 1);
    if (/\ssrc\s*=/i.test(open) || !m[1]) continue;
    out.push(`sha256-${createHash("sha256").update(m[1], "utf8").digest("base64")}`);
  }
  return out;
}

export function sealWorker(dir) {
  const pageBytes = readFileSync(join(dir, "index.html"));
  const html = pageBytes.toString("utf8");
  if (!Buffer.from(html, "utf8").equals(pageBytes)) fail("index.html is not UTF-8 (the worker reads it as UTF-8)");
  // The real gateway puts its attributes on the page's first `<html …>` tag, right after
  // `<html` (lower case); the worker takes exactly those back out before it hashes. The build's
  // own tag must therefore be lower case and carry none of them.
  const tag = html.match(/<html\b[^>]*>/i);
  if (!tag || !tag[0].startsWith("<html") || tag[0].includes("data-openclaw-")) {
    fail(`index.html's <html> tag is ${JSON.stringify(tag && tag[0])}: it must be lower case, without data-openclaw-… attributes`);
  }
  // The real gateway also rewrites these references (`rewriteControlUiIndexHtmlAssetHrefs`), which
  // the worker does not undo: a page holding one would never match its hash there.
  if (/(?:src|href)="\.\/assets\/|href="\.?\/(?:apple-touch-icon\.png|favicon-32\.png|favicon\.ico|favicon\.svg|manifest\.webmanifest|sw\.js)"/.test(html)) {
    fail("index.html holds a reference the real gateway rewrites (./assets/…, /favicon…, /sw.js …)");
  }
  const files = html.match(/<meta name=["']?ocui-files["']? content="([^"]*)"/);
  if (files && files[1].split(/\s+/).some((w) => /(?:^|\/)sw\.js$/.test(w))) fail("the page names sw.js among its files: the worker's hash would feed back into the page");

  const worker = join(dir, "sw.js");
  const source = readFileSync(worker, "utf8");
  const line = /^const BUILD = .*;$/m;
  if (!line.test(source)) fail("sw.js has no `const BUILD = …;` line to write the page's hashes on");
  const build = {
    page: `sha384-${createHash("sha384").update(pageBytes).digest("base64")}`,
    scripts: inlineScriptHashes(html),
  };
  const sealed = source
    .replace(line, () => `const BUILD = ${JSON.stringify(build)};`)
    .split("\n")
    // Served as it is (the gateway compresses only the page): without its comment lines and
    // indentation. No string or template in the worker spans lines, so this changes no value.
    .map((l) => l.trimStart())
    .filter((l) => l !== "" && !l.startsWith("//"))
    .join("\n")
    .concat("\n");
  try {
    new Script(sealed, { filename: "sw.js" });
  } catch (e) {
    fail(`sw.js does not parse once its comment lines are gone: ${e}`);
  }
  writeFileSync(worker, sealed);
  return build;
}

if (import.meta.url === pathToFileURL(process.argv[1] || "").href) {
  const dir = process.argv[2];
  if (!dir) {
    console.error("usage: node scripts/seal-worker.mjs <build dir>");
    process.exit(2);
  }
  try {
    const build = sealWorker(dir);
    console.log(`seal-worker: ${join(dir, "sw.js")} names index.html ${build.page} and ${build.scripts.length} inline scripts`);
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
