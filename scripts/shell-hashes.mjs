// Trunk post_build hook (Trunk.toml): names the SHA-384 of every file the page loads in the
// page itself, `<meta name="ocui-files" content="app-….js sha384-… app-…_bg.wasm sha384-…">`.
// The service worker (public/sw.js) serves a cached file only if its bytes match what the page
// fresh from the gateway names, so a same-origin script that wrote the cache cannot persist.
// (No `integrity` attributes: Chromium's warning about SRI on a wasm preload names the page
// URL, #token fragment included, in its console.) Only index.html is written; wasm-bindgen's
// output is read, never changed.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

const stage = process.env.TRUNK_STAGING_DIR;
if (!stage) {
  console.error("shell-hashes: TRUNK_STAGING_DIR is not set (run by trunk as a post_build hook)");
  process.exit(1);
}
const page = join(stage, "index.html");
const html = readFileSync(page, "utf8");
const files = readdirSync(stage).filter((f) => /\.(?:js|wasm|css|svg)$/.test(f) && html.includes(f));
const entries = files.map((f) => `${f} sha384-${createHash("sha384").update(readFileSync(join(stage, f))).digest("base64")}`);
const meta = `<meta name=ocui-files content="${entries.join(" ")}">`;
if (!html.includes("</head>") && !html.includes("<body")) {
  console.error("shell-hashes: index.html has neither </head> nor <body>");
  process.exit(1);
}
const out = html.includes("</head>") ? html.replace("</head>", `${meta}</head>`) : html.replace("<body", `${meta}<body`);
writeFileSync(page, out);
console.log(`shell-hashes: ${entries.length} files named in index.html`);
