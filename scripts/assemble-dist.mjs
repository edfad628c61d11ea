// Assembles dist/ from the built pieces (see scripts/build-ui.sh):
//   app.js + app_bg.wasm   wasm-bindgen's glue and the main module
//   __wasm_split.js        wasm-split-cli's chunk loader (imported by app.js)
//   <name>.wasm            the lazily loaded chunks (split_<point>.wasm per split point, and
//                          chunk_<n>.wasm for code that several split points share)
//   main.css               the compiled stylesheet
// Every file is renamed after a hash of the build's content, the JS references between them
// are rewritten to the new names, the JS is minified, and index.html is written from the
// template at the repository root. Any reference that is not where it is expected fails the
// build with a message that names it, rather than shipping a page that cannot load.
//
// usage: node scripts/assemble-dist.mjs <built-dir> <dist-dir>

import { createHash } from "node:crypto";
import { readFileSync, writeFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { minify } from "terser";

const [, , built, dist] = process.argv;
if (!built || !dist) {
  console.error("usage: node scripts/assemble-dist.mjs <built-dir> <dist-dir>");
  process.exit(2);
}

const read = (name) => readFileSync(join(built, name));
const chunks = readdirSync(built).filter((f) => f.endsWith(".wasm") && f !== "app_bg.wasm").sort();
const inputs = ["app.js", "app_bg.wasm", "__wasm_split.js", ...chunks, "main.css"];

const hash = createHash("sha256");
for (const name of inputs) hash.update(name).update(read(name));
const tag = hash.digest("hex").slice(0, 16);

const names = {
  js: `app-${tag}.js`,
  wasm: `app-${tag}_bg.wasm`,
  loader: `app-${tag}-chunks.js`,
  css: `main-${tag}.css`,
};
const chunkNames = Object.fromEntries(chunks.map((c) => [c, `${c.replace(/^split_/, "").replace(/\.wasm$/, "")}-${tag}.wasm`]));

/** Replaces `from` by `to` exactly `count` times, or fails the build naming what is missing. */
function replaceExactly(text, from, to, count, where) {
  const found = text.split(from).length - 1;
  if (found !== count) {
    console.error(`assemble-dist: expected ${count} × ${JSON.stringify(from)} in ${where}, found ${found}`);
    process.exit(1);
  }
  return text.split(from).join(to);
}

async function minified(code, where) {
  const out = await minify(code, { module: true, compress: true, mangle: true });
  if (!out.code) {
    console.error(`assemble-dist: terser returned nothing for ${where}`);
    process.exit(1);
  }
  return out.code;
}

// Every export the glue calls must be in the optimised main module (the build removes some).
const exported = new Set(WebAssembly.Module.exports(new WebAssembly.Module(read("app_bg.wasm"))).map((e) => e.name));
const called = new Set([...read("app.js").toString().matchAll(/\bwasm\.([A-Za-z0-9_$]+)/g)].map((m) => m[1]));
const missing = [...called].filter((name) => !exported.has(name));
if (missing.length > 0) {
  console.error(`assemble-dist: app.js calls wasm exports that the module lacks: ${missing.join(", ")}`);
  process.exit(1);
}

// app.js imports the loader by its module name; the wasm's import object keeps the name the
// wasm was linked against ("./__wasm_split.js" as a key), so only the import statement changes.
let glue = read("app.js").toString();
glue = replaceExactly(glue, 'from "./__wasm_split.js"', `from "./${names.loader}"`, 1, "app.js");

let loader = read("__wasm_split.js").toString();
loader = replaceExactly(loader, 'from "./app.js"', `from "./${names.js}"`, 1, "__wasm_split.js");
for (const [chunk, name] of Object.entries(chunkNames)) {
  loader = replaceExactly(loader, `"./${chunk}"`, `"./${name}"`, 1, "__wasm_split.js");
}

const stale = [...loader.matchAll(/"\.\/([^"]+\.wasm)"/g)].map((m) => m[1]).filter((f) => !Object.values(chunkNames).includes(f));
if (stale.length > 0) {
  console.error(`assemble-dist: __wasm_split.js loads wasm files that were not built: ${stale.join(", ")}`);
  process.exit(1);
}

writeFileSync(join(dist, names.js), await minified(glue, "app.js"));
writeFileSync(join(dist, names.loader), await minified(loader, "__wasm_split.js"));
writeFileSync(join(dist, names.wasm), read("app_bg.wasm"));
for (const [chunk, name] of Object.entries(chunkNames)) writeFileSync(join(dist, name), read(chunk));
const css = read("main.css");
writeFileSync(join(dist, names.css), css);

// The page: the stylesheet (with SRI), the two initial scripts preloaded, the main wasm
// preloaded, and a module script that starts the app. No SRI on the wasm preload: Chromium
// ignores it with a console warning that names the page URL, token fragment included.
const sri = "sha384-" + createHash("sha384").update(css).digest("base64");
const assets = [
  `<link rel="stylesheet" href="/${names.css}" integrity="${sri}" />`,
  `<link rel="modulepreload" href="/${names.js}" />`,
  `<link rel="modulepreload" href="/${names.loader}" />`,
  `<link rel="preload" href="/${names.wasm}" as="fetch" type="application/wasm" crossorigin="anonymous" />`,
  `<script type="module">import init from "/${names.js}"; await init({ module_or_path: "/${names.wasm}" });</script>`,
].join("\n    ");
const template = readFileSync(new URL("../index.html", import.meta.url), "utf8");
writeFileSync(join(dist, "index.html"), replaceExactly(template, "<!-- ocui:assets -->", assets, 1, "index.html"));

console.log(`dist: ${[names.js, names.loader, names.wasm, ...Object.values(chunkNames), names.css].join(", ")}`);
