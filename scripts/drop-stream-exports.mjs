// Drops the three `wasm-streams` classes (IntoUnderlyingSource, IntoUnderlyingSink,
// IntoUnderlyingByteSource) that Leptos' server-function support links into every app. A
// client-side app never constructs them: nothing in the glue or the wasm creates one. They
// cost their exports, the Rust code behind them and about 3 KB of JS.
//
// Removes the classes and their finalization registries from wasm-bindgen's JS; build-ui.sh
// then removes their exports with wasm-opt (`--remove-exports`), whose -Oz drops the code only
// they reached, and assemble-dist.mjs checks that every export the glue still uses is there.
// Fails the build, naming what differs, if the glue does not have the expected shape
// (wasm-bindgen is pinned in Cargo.toml and scripts/setup.sh).
// (wasm-metadce could do the export removal too, but its output compresses about 7 KB worse.)
//
// usage: node scripts/drop-stream-exports.mjs <app.js>

import { readFileSync, writeFileSync } from "node:fs";

const [, , jsPath] = process.argv;
if (!jsPath) {
  console.error("usage: node scripts/drop-stream-exports.mjs <app.js>");
  process.exit(2);
}
const CLASSES = ["IntoUnderlyingByteSource", "IntoUnderlyingSink", "IntoUnderlyingSource"];
const fail = (msg) => {
  console.error(`drop-stream-exports: ${msg}`);
  process.exit(1);
};

let js = readFileSync(jsPath, "utf8");
/** Removes `text` (which must occur exactly once). */
const cut = (text, what) => {
  const n = js.split(text).length - 1;
  if (n !== 1) fail(`expected one ${what} in ${jsPath}, found ${n}`);
  js = js.replace(text, "");
};
for (const name of CLASSES) {
  const start = js.indexOf(`export class ${name} {\n`);
  if (start < 0) fail(`no class ${name} in ${jsPath}`);
  const end = js.indexOf("\n}\n", start);
  if (end < 0) fail(`class ${name} does not end where expected`);
  cut(js.slice(start, end + 3), `class ${name}`);
  cut(`if (Symbol.dispose) ${name}.prototype[Symbol.dispose] = ${name}.prototype.free;\n`, `${name} dispose line`);
  const reg = js.indexOf(`const ${name}Finalization = `);
  if (reg < 0) fail(`no ${name}Finalization in ${jsPath}`);
  cut(js.slice(reg, js.indexOf(";\n", reg) + 2), `${name}Finalization`);
}
if (/intounderlying/i.test(js)) fail(`${jsPath} still mentions the stream classes after the cut`);
writeFileSync(jsPath, js);

console.log(`dropped ${CLASSES.join(", ")} from ${jsPath}`);
