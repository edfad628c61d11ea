// Trunk post_build hook (Trunk.toml). All on the staged build, before it becomes dist/:
//
// 0. wasm-bindgen's glue (its `no-modules` output, a classic script) goes into the page, as it
//    is, in place of its `<script src>`, and its file is removed; around it, the parts of the
//    page's loader (src/loader.js: the start-up, in one place). The real gateway compresses
//    the page and no other file of a configured root, and hashes every inline script into its
//    CSP: the glue's 107 KB cross the wire as part of the page's gzip, with no request of its own.
//    The early module's glue (an ES module) stays a file of its own, named by its hash, which
//    the loader imports on the visits that start the early module.
// 1. The wasm gets a gzip'd copy (zopfli), `app-…_bg.wasm.gz`, which the page's loader
//    (src/loader.js, put into the page in step 0) fetches and unpacks with the browser's DecompressionStream. The real
//    OpenClaw gateway sends a configured `controlUi.root` uncompressed (it compresses only its
//    bundled UI and index.html), so without this the wasm would cross the wire at its full size.
//    The copy is the wasm's exact bytes: wasm-bindgen's output is never changed.
// 2. The page names the SHA-384 of every file it loads, `<meta name="ocui-files" content="app-….js
//    sha384-… app-…_bg.wasm.gz sha384-…">`. The service worker (public/sw.js) keeps exactly these
//    files and serves a cached one only if its bytes match what the page fresh from the gateway
//    names, so a same-origin script that wrote the cache cannot persist. (No `integrity`
//    attributes: Chromium's warning about SRI on a preload names the page URL, #token fragment
//    included, in its console.) The files a first visit does not fetch (the app's split
//    modules, among them `markdown`, and the early module's glue and wasm) are named apart
//    (`<meta name="ocui-files-on-use">`): the worker keeps each once it is used or asked for.
//
// 3. The page preloads the app's gzip'd wasm (`<link rel=preload as=fetch crossorigin>`, right after
//    the charset): the browser's preload scanner reads it as the page's first bytes arrive, before
//    the parser has run the loader, and the loader's `fetch()` of the same URL takes that
//    response over (a same-origin fetch is what `as=fetch` with `crossorigin` stands for), so
//    nothing is fetched twice (`budgets.rs` counts the bytes). Over a real link the app's wasm is
//    the longest wait of a first visit; this starts it 15 to 20 ms sooner.
//
// 4. Last, once the page is final: the service worker is sealed to it (scripts/seal-worker.mjs
//    writes the page's SHA-384 and its inline scripts' SHA-256s into sw.js). The worker serves
//    its cached page only if it is exactly this page, with a CSP built from those hashes. The
//    page never names the worker, so nothing feeds back into it.
//
// Only index.html is rewritten (its comments go; the glue's element, those two meta elements and
// the preload), then sw.js (its `const BUILD` line, and its comment lines go); the early module's
// files are renamed by their hashes.
import { createHash } from "node:crypto";
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, statSync, utimesSync, readFileSync, writeFileSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzip } from "@gfx/zopfli";
import { sealWorker } from "./seal-worker.mjs";

const profile = process.env.TRUNK_PROFILE === "debug" ? "debug" : "release";
const source = process.env.TRUNK_SOURCE_DIR || ".";
const target = process.env.CARGO_TARGET_DIR || join(source, "target");
// What this hook made from given bytes (the app's split, zopfli's copies), by their hash.
const cache = join(target, "post-build-cache");
// The tools' versions, for the cache's key (wasm-split-cli prints none: its binary's hash).
const toolVersions = () => {
  const run = (cmd, args) => {
    try {
      return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    } catch (e) {
      return `${cmd}: ${e.message}`;
    }
  };
  const splitter = (process.env.PATH || "").split(":").map((d) => join(d, "wasm-split-cli")).find((p) => existsSync(p));
  const wasmOpt = [join(source, "node_modules/.bin/wasm-opt")].find((p) => existsSync(p)) || "wasm-opt";
  return [
    splitter ? createHash("sha256").update(readFileSync(splitter)).digest("hex") : "no wasm-split-cli",
    run("wasm-bindgen", ["--version"]),
    run(wasmOpt, ["--version"]),
  ].join("\n");
};

// 0a. The app's split (Cargo feature `split`, build.rs, `components::on_use`). Code that only a
// `#[lazy]` function reaches goes into modules of its own, fetched the first time a view needs
// it. The split works on cargo's output, before wasm-bindgen, so Trunk's wasm-bindgen and
// wasm-opt of the app are replaced here (index.html: `data-wasm-opt="0"`; Trunk's glue of the
// unsplit wasm is overwritten). In order:
//  1. `wasm-split-cli` (wasm_split_cli_support, the splitter cargo-leptos uses; scripts/setup.sh
//     installs it) reads the relocations that build.rs asked the linker for and writes the main
//     module, one module per split point (`split_<fn>_<n>.wasm`), modules of code several split
//     points share (`chunk_<n>.wasm`) and their loader (`__wasm_split.js`, an ES module);
//  2. wasm-bindgen, as Trunk runs it (`no-modules`), plus `--keep-lld-exports`: the split modules
//     import the main module's function table, which it would otherwise drop;
//  3. wasm-opt -Oz on every module (not in a debug build): the main module (the longest) beside
//     the others, one after another, two at a time in all;
//  4. the loader into wasm-bindgen's glue, which names it as `require("./__wasm_split.js")` (a
//     classic script has no `import`): its `import { initSync }` goes (the glue's own `initSync`
//     is in scope, and answers with the running instance), its `export const`s become the object
//     the `require` stood for, and each module's fetch becomes `window.ocuiFetchPart(file)`
//     (src/loader.js: the gzip'd copy, kept by the service worker once used). Each module is
//     named by its content's hash, like the app's wasm. The text of both tools is checked; a
//     version that writes it differently stops the build.
async function splitApp(glueFile) {
  const cargoWasm = join(target, "wasm32-unknown-unknown", profile, "app.wasm");
  const stem = glueFile.slice(0, -".js".length);
  // The same cargo output split, bound and optimised by the same tools and this same script gives
  // the same files: the second build of a `make test` (the `/ui/` base path, whose wasm is the
  // root's) takes them from the cache instead of running the tools again.
  const key = createHash("sha256")
    .update(readFileSync(cargoWasm))
    .update(readFileSync(new URL(import.meta.url)))
    .update(`${profile}\n${toolVersions()}`)
    .digest("hex");
  const cached = join(cache, `split-${key}`);
  if (existsSync(join(cached, "parts.json"))) {
    const parts = JSON.parse(readFileSync(join(cached, "parts.json"), "utf8"));
    copyFileSync(join(cached, "main_bg.wasm"), `${stem}_bg.wasm`);
    copyFileSync(join(cached, "glue.js"), glueFile);
    for (const part of parts) copyFileSync(join(cached, part), join(stage, part));
    console.log(`post-build: the app's split taken from ${cached} (${parts.length} modules fetched on first use)`);
    return parts;
  }
  const work = mkdtempSync(join(tmpdir(), "ocui-split-"));
  const tool = (cmd, args) => {
    try {
      execFileSync(cmd, args, { stdio: ["ignore", "ignore", "inherit"] });
    } catch (e) {
      console.error(`post-build: ${cmd} failed (${e.message})`);
      process.exit(1);
    }
  };
  const wasmOpt = [join(source, "node_modules/.bin/wasm-opt")].find((p) => existsSync(p)) || "wasm-opt";
  // Its messages go to the build's output as they come; a failure rejects, and the build stops.
  const optimise = (from, to) =>
    profile !== "release"
      ? Promise.resolve(copyFileSync(from, to))
      : new Promise((resolve, reject) =>
          spawn(wasmOpt, ["-Oz", "--output", to, from], { stdio: ["ignore", "ignore", "inherit"] })
            .on("error", reject)
            .on("exit", (code, signal) => (code === 0 ? resolve() : reject(new Error(`post-build: wasm-opt failed on ${from} (exit ${code ?? signal})`)))),
        );
  tool("wasm-split-cli", [cargoWasm, join(work, "split"), "--out-name", "app"]);
  tool("wasm-bindgen", ["--target=no-modules", "--keep-lld-exports", `--out-dir=${join(work, "bg")}`, "--out-name=app", join(work, "split", "app.wasm")]);
  const split = readdirSync(join(work, "split")).filter((f) => /^(split|chunk)_\w+\.wasm$/.test(f)).sort();
  await Promise.all([
    optimise(join(work, "bg", "app_bg.wasm"), `${stem}_bg.wasm`),
    (async () => {
      for (const f of split) await optimise(join(work, "split", f), join(work, `opt-${f}`));
    })(),
  ]);
  let loader = readFileSync(join(work, "split", "__wasm_split.js"), "utf8");
  const parts = [];
  for (const f of split) {
    const bytes = readFileSync(join(work, `opt-${f}`));
    const what = f.replace(/^split_/, "").replace(/(_\d+)?\.wasm$/, "").replace(/_/g, "-");
    const name = `app-${what}-${createHash("sha256").update(bytes).digest("hex").slice(0, 16)}.wasm`;
    writeFileSync(join(stage, name), bytes);
    const from = `fetch(new URL("./${f}", import.meta.url))`;
    if (!loader.includes(from)) {
      console.error(`post-build: the split loader does not fetch ${f} as \`${from}\` (wasm-split-cli changed?)`);
      process.exit(1);
    }
    loader = loader.replace(from, `window.ocuiFetchPart(${JSON.stringify(name)})`);
    parts.push(name);
  }
  const initImport = /^import \{ initSync \} from "[^"]+";\n/m;
  const exported = [];
  loader = loader.replace(initImport, "").replace(/^export const (\w+) =/gm, (_, n) => (exported.push(n), `const ${n} =`));
  let glue = readFileSync(join(work, "bg", "app.js"), "utf8");
  const requires = [...glue.matchAll(/const (\w+) = require\("\.\/__wasm_split\.js"\);/g)];
  if (!exported.length || !requires.length || /^\s*(import|export)\b|import\.meta/m.test(loader) || glue.includes("__wasm_split_placeholder__")) {
    console.error(`post-build: the split loader or wasm-bindgen's glue is not as expected (${exported.length} split points, ${requires.length} requires)`);
    process.exit(1);
  }
  const first = requires[0][1];
  glue = glue.replace(/const (\w+) = require\("\.\/__wasm_split\.js"\);/g, (_, v) =>
    v === first ? `const ${v} = (() => {\n${loader}\nreturn { ${exported.join(", ")} };\n})();` : `const ${v} = ${first};`,
  );
  if (/\brequire\(/.test(glue)) {
    console.error("post-build: wasm-bindgen's glue still requires a module after the split loader went in");
    process.exit(1);
  }
  writeFileSync(glueFile, glue);
  rmSync(work, { recursive: true });
  // Into the cache, replacing any earlier split (one is all a build reads).
  mkdirSync(cache, { recursive: true });
  for (const old of readdirSync(cache).filter((f) => f.startsWith("split-"))) rmSync(join(cache, old), { recursive: true, force: true });
  const fresh = `${cached}.tmp-${process.pid}`;
  mkdirSync(fresh);
  copyFileSync(`${stem}_bg.wasm`, join(fresh, "main_bg.wasm"));
  copyFileSync(glueFile, join(fresh, "glue.js"));
  for (const part of parts) copyFileSync(join(stage, part), join(fresh, part));
  writeFileSync(join(fresh, "parts.json"), JSON.stringify(parts));
  renameSync(fresh, cached);
  console.log(`post-build: the app split into its main module and ${parts.length} modules fetched on first use`);
  return parts;
}

const stage = process.env.TRUNK_STAGING_DIR;
if (!stage) {
  console.error("post-build: TRUNK_STAGING_DIR is not set (run by trunk as a post_build hook)");
  process.exit(1);
}
const page = join(stage, "index.html");
let html = readFileSync(page, "utf8");
// index.html's comments are notes for whoever reads the source, not for the browser: they go, as
// the loader's and the service worker's comment lines do (every first visit fetches the page).
html = html.replace(/<!--[\s\S]*?-->/g, "").replace(/\n\s*\n/g, "\n");
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
const splitParts = await splitApp(glueFile);
const glue = readFileSync(glueFile, "utf8");
// Text that would end or confuse an inline script element; wasm-bindgen's glue has none, and the
// build stops rather than change it if a version ever does.
if (/<\/script|<!--/i.test(glue) || /^export /m.test(glue)) {
  console.error(`post-build: ${glueMatch[3]} cannot go into the page unchanged (it holds "</script", "<!--" or an ES export)`);
  process.exit(1);
}
// Zopfli: a gzip stream any inflater reads, 4-5% smaller than gzip -9 (about 3 s per build).
// Each copy is kept in the cache by its input's hash, so a second build of the same bytes (the
// `/ui/` build) writes it at once; copies no build used for a day are removed at the end.
const pack = async (file) => {
  const bytes = readFileSync(join(stage, file));
  const cached = join(cache, `gz-${createHash("sha256").update(bytes).digest("hex")}`);
  if (existsSync(cached)) {
    copyFileSync(cached, join(stage, `${file}.gz`));
    const now = new Date();
    utimesSync(cached, now, now);
    return `${file}.gz`;
  }
  const squeezed = await new Promise((resolve, reject) => gzip(bytes, { numiterations: 1 }, (e, out) => (e ? reject(e) : resolve(out))));
  writeFileSync(join(stage, `${file}.gz`), squeezed);
  mkdirSync(cache, { recursive: true });
  writeFileSync(`${cached}.tmp-${process.pid}`, squeezed);
  renameSync(`${cached}.tmp-${process.pid}`, cached);
  return `${file}.gz`;
};

// A module that Trunk built as a `worker` asset (built, then left to the page): its glue,
// wasm-bindgen's `web` output (an ES module that the loader imports), and its wasm, each renamed
// by its hash (Trunk names a worker's files without one, and a new build must be new URLs); the
// wasm is packed.
const workerModule = async (name) => {
  const glueBytes = readFileSync(join(stage, `${name}.js`));
  if (!/^export \{ initSync, __wbg_init as default \};$/m.test(glueBytes.toString("utf8"))) {
    console.error(`post-build: ${name}.js does not export \`__wbg_init\` as its default (wasm-bindgen's \`web\` output changed?)`);
    process.exit(1);
  }
  const glue = `${name}-${createHash("sha256").update(glueBytes).digest("hex").slice(0, 16)}.js`;
  renameSync(join(stage, `${name}.js`), join(stage, glue));
  const bytes = readFileSync(join(stage, `${name}_bg.wasm`));
  const wasm = `${name}-${createHash("sha256").update(bytes).digest("hex").slice(0, 16)}_bg.wasm`;
  renameSync(join(stage, `${name}_bg.wasm`), join(stage, wasm));
  const packed = await pack(wasm);
  return { glue, wasm, packed };
};
const base = glueMatch[2] || "";

// 0b. The early module (src/bin/early.rs), started by the loader's part "early" when the page
// opened the gateway's socket and the service worker holds the module.
const early = await workerModule("early");

const appWasm = readdirSync(stage).filter((f) => /^app-.*_bg\.wasm$/.test(f));
if (appWasm.length !== 1) {
  console.error(`post-build: expected one app wasm module in the build, found ${JSON.stringify(appWasm)}`);
  process.exit(1);
}

// 0c. The loader (src/loader.js): its parts, without their comment lines, the names filled in.
const loader = {};
{
  const source = readFileSync(new URL("../src/loader.js", import.meta.url), "utf8");
  const names = { BASE: base, APP_WASM: appWasm[0], EARLY_GLUE: early.glue, EARLY_WASM: early.wasm, EARLY_PACKED: early.packed };
  let part = null;
  for (const line of source.split("\n")) {
    const mark = line.match(/^\/\/ @part (\S+)$/);
    if (mark) {
      part = mark[1];
      loader[part] = "";
    } else if (part && line.trim() !== "" && !/^\s*\/\//.test(line)) {
      loader[part] += line.replace(/@([A-Z_]+)@/g, (m, name) => {
        if (!(name in names)) {
          console.error(`post-build: src/loader.js names @${name}@, which the hook does not fill in`);
          process.exit(1);
        }
        return names[name];
      }) + "\n";
    }
  }
  for (const want of ["before-glue", "early", "start-app"]) {
    if (!loader[want]) {
      console.error(`post-build: src/loader.js has no part "${want}"`);
      process.exit(1);
    }
    if (/<\/script|<!--/i.test(loader[want])) {
      console.error(`post-build: src/loader.js's part "${want}" holds "</script" or "<!--"`);
      process.exit(1);
    }
  }
}

html = html.replace(
  glueTag,
  () =>
    `<script>${loader["before-glue"]}</script>` +
    `<script>${loader.early}</script>` +
    `<script>${glue}</script><script>${loader["start-app"]}</script>`,
);
rmSync(glueFile);

const packed = await pack(appWasm[0]);
if (!html.includes(appWasm[0]) || !html.includes(".gz")) {
  console.error(`post-build: the page's loader does not fetch ${packed} (src/loader.js)`);
  process.exit(1);
}
// 3. The preload, right after the charset (which must come first).
const charset = /<meta charset="?utf-8"?\s*\/?>/i;
if (!charset.test(html)) {
  console.error("post-build: index.html has no <meta charset=utf-8> to put the wasm's preload after");
  process.exit(1);
}
html = html.replace(charset, (m) => `${m}<link rel=preload as=fetch crossorigin href="${base}${packed}">`);
// 3b. The web manifest (public/app.webmanifest), under the base path: its `start_url` and `scope`
// are "./", relative to the manifest itself, so one file serves the root and a base path. Not
// `manifest.webmanifest`: the real gateway rewrites a link to that name for its own UI.
html = html.replace("</head>", () => `<link rel=manifest href="${base}app.webmanifest"></head>`);

// What the page loads: every built file it names, and the wasm by its packed copy only.
const files = readdirSync(stage)
  .filter((f) => /\.(?:js|css|svg)$/.test(f) && new RegExp(`(?:src|href)=["']?[^"' >]*/${f.replace(/\./g, "\\.")}["' >]`).test(html))
  .concat(packed);
const entry = (f) => `${f} sha384-${createHash("sha384").update(readFileSync(join(stage, f))).digest("base64")}`;
const entries = files.map(entry);
const splitPacked = [];
for (const part of splitParts) splitPacked.push(await pack(part));
const onUse = [early.glue, early.packed, ...splitPacked].map(entry);
writeFileSync(
  page,
  html.replace("</head>", `<meta name=ocui-files content="${entries.join(" ")}"><meta name=ocui-files-on-use content="${onUse.join(" ")}"></head>`),
);
console.log(`post-build: ${packed} and ${early.packed} written; ${entries.length} files named in index.html, ${onUse.length} kept on use`);
// 4. Nothing may change the page after this.
try {
  const sealed = sealWorker(stage);
  console.log(`post-build: sw.js sealed to index.html (${sealed.page}, ${sealed.scripts.length} inline scripts)`);
} catch (e) {
  console.error(`post-build: ${e.message}`);
  process.exit(1);
}
// 5. Zopfli copies that no build used for a day leave the cache.
for (const f of readdirSync(cache).filter((f) => f.startsWith("gz-"))) {
  if (Date.now() - statSync(join(cache, f)).mtimeMs > 86_400_000) rmSync(join(cache, f), { force: true });
}
