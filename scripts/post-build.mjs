// Trunk post_build hook (Trunk.toml). Three things, all on the staged build, before it becomes
// dist/:
//
// 0. wasm-bindgen's glue (its `no-modules` output, a classic script) goes into the page, as it
//    is, in place of its `<script src>`, and its file is removed. The real gateway compresses
//    the page and no other file of a configured root, and hashes every inline script into its
//    CSP: the glue's 88 KB cross the wire as part of the page's gzip, with no request of its own.
// 1. The wasm gets a gzip'd copy (zopfli), `app-…_bg.wasm.gz`, which the page's loader (Trunk.toml's
//    `pattern_script`) fetches and unpacks with the browser's DecompressionStream. The real
//    OpenClaw gateway sends a configured `controlUi.root` uncompressed (it compresses only its
//    bundled UI and index.html), so without this the wasm would cross the wire at its full size.
//    The copy is the wasm's exact bytes: wasm-bindgen's output is never changed.
// 2. The page names the SHA-384 of every file it loads, `<meta name="ocui-files" content="app-….js
//    sha384-… app-…_bg.wasm.gz sha384-…">`. The service worker (public/sw.js) keeps exactly these
//    files and serves a cached one only if its bytes match what the page fresh from the gateway
//    names, so a same-origin script that wrote the cache cannot persist. (No `integrity`
//    attributes: Chromium's warning about SRI on a preload names the page URL, #token fragment
//    included, in its console.)
//
// Only index.html is rewritten: the glue's element and that one meta element.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { gzip } from "@gfx/zopfli";

const stage = process.env.TRUNK_STAGING_DIR;
if (!stage) {
  console.error("post-build: TRUNK_STAGING_DIR is not set (run by trunk as a post_build hook)");
  process.exit(1);
}
const page = join(stage, "index.html");
let html = readFileSync(page, "utf8");
if (!html.includes("</head>")) {
  console.error("post-build: index.html has no </head>");
  process.exit(1);
}

// 0. wasm-bindgen's glue goes into the page as it is (Trunk.toml: `no-modules`, a classic script).
const glueTag = /<script src=(["']?)([^"' >]*\/)?(app-[0-9a-f]+\.js)\1><\/script>/;
const glueMatch = html.match(glueTag);
if (!glueMatch) {
  console.error("post-build: the page has no <script src=…app-….js></script> for wasm-bindgen's glue (Trunk.toml's pattern_script)");
  process.exit(1);
}
const glueFile = join(stage, glueMatch[3]);
const glue = readFileSync(glueFile, "utf8");
// Text that would end or confuse an inline script element; wasm-bindgen's glue has none, and the
// build stops rather than change it if a version ever does.
if (/<\/script|<!--/i.test(glue) || /^export /m.test(glue)) {
  console.error(`post-build: ${glueMatch[3]} cannot go into the page unchanged (it holds "</script", "<!--" or an ES export)`);
  process.exit(1);
}
// Zopfli: a gzip stream any inflater reads, 4-5% smaller than gzip -9 (about 3 s per build).
const pack = async (file) => {
  const bytes = readFileSync(join(stage, file));
  const squeezed = await new Promise((resolve, reject) => gzip(bytes, { numiterations: 1 }, (e, out) => (e ? reject(e) : resolve(out))));
  writeFileSync(join(stage, `${file}.gz`), squeezed);
  return `${file}.gz`;
};

// 0b. The early module (src/bin/early.rs, a Trunk `worker` asset: built, then left to the page).
// Its glue is wasm-bindgen's `web` output, an ES module, which goes into the page as it is in a
// module script, followed by its start: if the loader opened the gateway's socket, fetch the
// module's gzip'd copy (the loader's `ocuiFetchWasm`) and initialise it (its `main` sends `connect`). Trunk names a worker's
// files without a hash; the wasm gets one here, so a new build is a new URL.
const earlyGlueFile = join(stage, "early.js");
const earlyGlue = readFileSync(earlyGlueFile, "utf8");
if (/<\/script|<!--/i.test(earlyGlue) || !/^export \{ initSync, __wbg_init as default \};$/m.test(earlyGlue)) {
  console.error('post-build: early.js cannot go into the page unchanged (it holds "</script" or "<!--", or does not export `__wbg_init` as its default)');
  process.exit(1);
}
const earlyBytes = readFileSync(join(stage, "early_bg.wasm"));
const earlyWasm = `early-${createHash("sha256").update(earlyBytes).digest("hex").slice(0, 16)}_bg.wasm`;
renameSync(join(stage, "early_bg.wasm"), join(stage, earlyWasm));
const earlyPacked = await pack(earlyWasm);
rmSync(earlyGlueFile);
const base = glueMatch[2] || "";
const earlyStart = `
const early = window.ocuiSocket;
if (early && early.settle) {
  __wbg_init({ module_or_path: window.ocuiFetchWasm(${JSON.stringify(base + earlyWasm)}) }).catch(function (e) {
    console.warn("The early connect could not start; the app connects by itself:", e);
    early.settle();
  });
}
`;

html = html.replace(glueTag, () => `<script type=module>${earlyGlue}${earlyStart}</script><script>${glue}</script>`);
rmSync(glueFile);

const wasm = readdirSync(stage).filter((f) => /^app-.*_bg\.wasm$/.test(f));
if (wasm.length !== 1) {
  console.error(`post-build: expected one app wasm module in the build, found ${JSON.stringify(wasm)}`);
  process.exit(1);
}
const packed = await pack(wasm[0]);
if (!html.includes(wasm[0]) || !html.includes(".gz")) {
  console.error(`post-build: the page's loader does not fetch ${packed} (Trunk.toml's pattern_script)`);
  process.exit(1);
}

// What the page loads: every built file it names, and the wasm by its packed copy only.
const files = readdirSync(stage)
  .filter((f) => /\.(?:js|css|svg)$/.test(f) && new RegExp(`(?:src|href)=["']?[^"' >]*/${f.replace(/\./g, "\\.")}["' >]`).test(html))
  .concat(packed, earlyPacked);
const entries = files.map((f) => `${f} sha384-${createHash("sha384").update(readFileSync(join(stage, f))).digest("base64")}`);
writeFileSync(page, html.replace("</head>", `<meta name=ocui-files content="${entries.join(" ")}"></head>`));
console.log(`post-build: ${packed} and ${earlyPacked} written; ${entries.length} files named in index.html`);
