#!/usr/bin/env node
// `make bench`: our UI side by side with the incumbent Control UI (bundled with the npm package
// `openclaw` and served by the real gateway), in headless Chromium on this machine.
// Prints a markdown table (medians over repeated runs, ratios measured in the same run, in
// alternating order) and writes it to target/bench/bench.md.
//
//   node bench/bench.mjs [--runs N] [--only 1,2,3,4,5,6,7,8,9,10] [--rt-seconds S] [--timeline] [--profile]
//   (--timeline logs where each cold load's time went: files, frames, the app's start;
//   --profile prints a CPU profile of each of our cold loads)
//
// Run with the real gateway's Node 24 (it resolves playwright-core from that install):
// the Makefile does this. Env: OPENCLAW_REAL_DIR (~/.cache/ocui/openclaw-2026.9.6),
// CHROMIUM (/usr/bin/chromium).
import { createRequire } from "node:module";
import { randomBytes } from "node:crypto";
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import http from "node:http";
import zlib from "node:zlib";
import { connectRetry, raiseQuestion, resolveQuestion, questionParams, configPatch } from "./gw.mjs";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith("--")) acc.push([a.slice(2), all[i + 1]?.startsWith("--") || all[i + 1] === undefined ? "1" : all[i + 1]]);
  return acc;
}, []));
const RUNS = Number(args.runs ?? 7);
const ONLY = new Set((args.only ?? "1,2,3,4,5,6,7,8,9,10").split(",").map(Number));
const RT_SECONDS = Number(args["rt-seconds"] ?? 10);
const REAL_DIR = process.env.OPENCLAW_REAL_DIR ?? path.join(os.homedir(), ".cache/ocui/openclaw-2026.9.6");
const SCRIPT = path.join(REPO, "scripts/real-gateway.sh");
const OUT = path.join(REPO, "target/bench");
// Both gateways get a random 256-bit token (the local gateway refuses a weak one).
const TOKEN = randomBytes(32).toString("hex");
const require = createRequire(path.join(REAL_DIR, "app/node_modules/openclaw/package.json"));
const { chromium } = require("playwright-core");

fs.mkdirSync(OUT, { recursive: true });
const log = (...a) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}]`, ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------- statistics ----------
const quantile = (xs, q) => { const s = [...xs].sort((a, b) => a - b); if (!s.length) return NaN; const i = (s.length - 1) * q; const lo = Math.floor(i); return s[lo] + (s[Math.ceil(i)] - s[lo]) * (i - lo); };
const median = (xs) => quantile(xs, 0.5);
const fmtMs = (x) => (Number.isFinite(x) ? (x < 10 ? x.toFixed(2) : x.toFixed(1)) + " ms" : "n/a");
const fmtKB = (x) => (Number.isFinite(x) ? (x / 1000).toFixed(1) + " KB" : "n/a");
const fmtMB = (x) => (Number.isFinite(x) ? (x / 1e6).toFixed(2) + " MB" : "n/a");
const ratio = (ours, theirs) => (Number.isFinite(ours) && Number.isFinite(theirs) && theirs > 0 ? (ours / theirs).toFixed(2) + "×" : "—");

// ---------- gateways ----------
async function waitHttp(port, ms = 120000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try { await fetch(`http://127.0.0.1:${port}/`); return; } catch { await sleep(200); }
  }
  throw new Error(`nothing answers HTTP on port ${port}`);
}

function startLocal(port, dataDir) {
  fs.rmSync(dataDir, { recursive: true, force: true });
  const child = spawn(path.join(REPO, "target/gateway/gateway"), ["--port", String(port), "--data-dir", dataDir, "--ui-root", path.join(REPO, "dist")],
    { env: { ...process.env, TOKEN, TOKEN_FILE: "" }, stdio: ["ignore", fs.openSync(`${dataDir}.log`, "w"), fs.openSync(`${dataDir}.log`, "a")] });
  return { kind: "local", port, url: `ws://127.0.0.1:${port}`, http: `http://127.0.0.1:${port}`, child, dataDir,
    async stop() { child.kill("SIGTERM"); await new Promise((r) => child.once("exit", r)); } };
}

/** A real gateway in its own state dir, sharing the cached install (node + openclaw). */
async function startReal(name, port, uiRoot) {
  const dir = path.join(OUT, `real-${name}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.symlinkSync(path.join(REAL_DIR, "node"), path.join(dir, "node"));
  fs.symlinkSync(path.join(REAL_DIR, "app"), path.join(dir, "app"));
  const env = { ...process.env, PORT: String(port), TOKEN };
  if (uiRoot) env.CONTROL_UI_ROOT = uiRoot; else delete env.CONTROL_UI_ROOT;
  execFileSync("bash", [SCRIPT, dir, "start"], { env, stdio: ["ignore", "ignore", "inherit"] });
  await waitHttp(port);
  return { kind: "real", name, port, url: `ws://127.0.0.1:${port}`, http: `http://127.0.0.1:${port}`,
    async stop() { try { execFileSync("bash", [SCRIPT, dir, "stop"], { env, stdio: "ignore" }); } catch {} } };
}

/** The UI's files on `port` without any gateway behind them (WebSocket upgrades fail). */
function serveStaticOnly(port) {
  const types = { ".wasm": "application/wasm", ".js": "text/javascript", ".css": "text/css", ".html": "text/html" };
  const root = path.join(REPO, "dist");
  const server = http.createServer((req, res) => {
    const p = path.join(root, path.normalize(decodeURIComponent(new URL(req.url, "http://x").pathname)));
    const file = p.startsWith(root) && fs.existsSync(p) && fs.statSync(p).isFile() ? p : path.join(root, "index.html");
    res.writeHead(200, { "content-type": types[path.extname(file)] ?? "application/octet-stream" });
    fs.createReadStream(file).pipe(res);
  });
  server.on("upgrade", (_req, socket) => socket.destroy());
  return new Promise((r) => server.listen(port, "127.0.0.1", () => r({ stop: () => new Promise((d) => { server.closeAllConnections(); server.close(d); }) })));
}

// ---------- browser ----------
let browser;
async function newPage({ width = 1000, height = 800 } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Performance.enable");
  const net = { requests: 0, bytes: 0, origins: new Set(), finished: [] };
  cdp.on("Network.requestWillBeSent", (e) => { if (!e.request.url.startsWith("data:")) { net.requests++; net.origins.add(new URL(e.request.url).origin); } });
  cdp.on("Network.loadingFinished", (e) => { net.bytes += e.encodedDataLength; net.finished.push(e.requestId); });
  page.on("response", (r) => { if (r.status() >= 400 && !r.url().endsWith("/favicon.ico")) log(`HTTP ${r.status()} for ${r.url()}`); });
  return { context, page, cdp, net };
}

// Runs in the page before any of its scripts: timestamps for WebSocket frames and paints.
const INSTRUMENT = () => {
  const B = (window.__bench = { frames: [], marks: {} });
  const Orig = window.WebSocket;
  window.WebSocket = class extends Orig {
    constructor(...a) {
      super(...a);
      this.addEventListener("message", (e) => {
        if (typeof e.data === "string") B.timeline.push([performance.now(), "← " + e.data.slice(0, 70)]);
        if (typeof e.data === "string" && B.watchFrame && e.data.includes(B.watchFrame)) { const f = { t: performance.now(), data: e.data }; B.frames.push(f); B.onFrame?.(f); }
      });
      this.addEventListener("open", () => B.timeline.push([performance.now(), "socket open"]));
    }
    send(data) {
      if (typeof data === "string") B.timeline.push([performance.now(), "→ " + data.slice(0, 70)]);
      return super.send(data);
    }
  };
  // --timeline: where a cold load's time goes (frames above, the app's start, each file's arrival).
  B.timeline = [];
  addEventListener("TrunkApplicationStarted", () => B.timeline.push([performance.now(), "app started (wasm instantiated)"]));
  try {
    new PerformanceObserver((l) => l.getEntries().forEach((e) => B.timeline.push([e.startTime, `main thread busy ${e.duration.toFixed(0)} ms (a long task starts)`])))
      .observe({ type: "longtask", buffered: true });
  } catch {}
  // first enabled option named "Alpha" (radio/checkbox/button/label of an enabled control)
  const optionReady = () => {
    for (const el of document.querySelectorAll("input[type=radio],input[type=checkbox],[role=radio],[role=checkbox],[role=option],button,label")) {
      if (!(el.textContent || "").includes("Alpha") && !(el.labels && [...el.labels].some((l) => l.textContent.includes("Alpha")))) continue;
      const control = el.tagName === "LABEL" ? (el.control || el.querySelector("input,button")) : el;
      if (control && (control.disabled || control.getAttribute("aria-disabled") === "true")) continue;
      if (el.getClientRects().length === 0) continue;
      return true;
    }
    return false;
  };
  const check = () => {
    if (B.marks.optionReady === undefined && optionReady()) {
      const t = performance.now();
      requestAnimationFrame(() => { B.marks.optionReady = t; B.marks.optionPaint = performance.now(); });
      B.marks.optionReady = -1; // found; the paint time fills in
    }
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
};

// ---------- 1. cold load to an answerable question (real gateway, ours vs bundled) ----------
// Remote links for benchmark 8, through Chromium's network emulation (latency is the round trip
// added to every request; throughput both ways).
const LINKS = [
  { name: "10 Mbit/s, 40 ms round trip (VPN, SSH tunnel)", mbit: 10, rttMs: 40 },
  { name: "2 Mbit/s, 150 ms round trip (a weak phone link)", mbit: 2, rttMs: 150 },
];

async function emulate(cdp, link) {
  if (!link) return;
  const bytesPerSecond = (link.mbit * 1e6) / 8;
  await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: link.rttMs, downloadThroughput: bytesPerSecond, uploadThroughput: bytesPerSecond });
}

// Self time per function (and per script) of a CDP CPU profile, the largest first.
function summariseProfile(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const perScript = new Map();
  profile.samples.forEach((id, i) => {
    const n = byId.get(id);
    const ms = (profile.timeDeltas[i] || 0) / 1000;
    const f = n.callFrame;
    const name = `${f.functionName || "(anonymous)"} ${f.url ? f.url.replace(/^.*\//, "").slice(0, 30) : ""}`;
    self.set(name, (self.get(name) || 0) + ms);
    const script = f.url ? f.url.replace(/^.*\//, "").slice(0, 40) : f.functionName;
    perScript.set(script, (perScript.get(script) || 0) + ms);
  });
  const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([n, ms]) => `  ${ms.toFixed(1).padStart(7)} ms  ${n}`).join("\n");
  return `by script:\n${top(perScript, 12)}\nby function (self):\n${top(self, 45)}`;
}

async function coldLoad(gw, agent, label, link = null) {
  const id = await raiseQuestion(agent, `Cold load ${label} ${Date.now()}?`);
  const { context, page, cdp, net } = await newPage();
  await emulate(cdp, link);
  await page.addInitScript(INSTRUMENT);
  // --profile: a CPU profile of the load, to the first option's paint (build with names kept to
  // read the wasm's functions: `data-wasm-opt-params="--debuginfo"` and `data-keep-debug`).
  const profiling = args.profile && label.startsWith("ours");
  if (profiling) {
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
    await cdp.send("Profiler.start");
  }
  await page.goto(`${gw.http}/ask/${encodeURIComponent(id)}#token=${TOKEN}`);
  await page.waitForFunction(() => window.__bench.marks.optionPaint !== undefined, null, { timeout: 60000, polling: 50 });
  const ready = await page.evaluate(() => window.__bench.marks.optionPaint);
  if (profiling) log(`profile ${label}${link ? `, ${link.name}` : ""}:\n` + summariseProfile((await cdp.send("Profiler.stop")).profile));
  if (args.timeline) {
    const t = await page.evaluate(() => [
      ...performance.getEntriesByType("resource").concat(performance.getEntriesByType("navigation"))
        .map((e) => [e.responseEnd, `${e.name.replace(/^.*\//, "").slice(0, 40)} arrived (${e.transferSize} B, started ${e.startTime.toFixed(0)})`]),
      ...window.__bench.timeline,
      [window.__bench.marks.optionPaint, "first option painted"],
    ]);
    log(`timeline ${label}${link ? `, ${link.name}` : ""}:\n` + t.sort((a, b) => a[0] - b[0]).map(([ms, what]) => `  ${ms.toFixed(0).padStart(6)} ms  ${what}`).join("\n"));
  }
  await sleep(2000);
  await cdp.send("HeapProfiler.enable");
  await cdp.send("HeapProfiler.collectGarbage");
  const metrics = Object.fromEntries((await cdp.send("Performance.getMetrics")).metrics.map((m) => [m.name, m.value]));
  const usage = await cdp.send("Runtime.getHeapUsage");
  // What the same files weigh gzip -9'd, whatever the server sent: a like-for-like size.
  // And what they weigh decoded, as the page uses them.
  let gzipped = 0;
  let decoded = 0;
  for (const requestId of net.finished) {
    try {
      const { body, base64Encoded } = await cdp.send("Network.getResponseBody", { requestId });
      const bytes = Buffer.from(body, base64Encoded ? "base64" : "utf8");
      decoded += bytes.length;
      gzipped += zlib.gzipSync(bytes, { level: 9 }).length;
    } catch { /* no body (e.g. a redirect) */ }
  }
  const origins = [...net.origins];
  await context.close();
  await resolveQuestion(agent, id).catch(() => {});
  return { ready, bytes: net.bytes, decoded, gzipped, requests: net.requests, heap: metrics.JSHeapUsedSize, buffers: usage.backingStorageSize ?? NaN, origins };
}

// ---------- 9. a warm repeat visit: what crosses the network when the page was loaded before ----------
async function warmRepeat(gw, agent) {
  const first = await raiseQuestion(agent, `Warm repeat first ${Date.now()}?`);
  const { context, page } = await newPage();
  await page.addInitScript(INSTRUMENT);
  await page.goto(`${gw.http}/ask/${encodeURIComponent(first)}#token=${TOKEN}`);
  await page.waitForFunction(() => window.__bench.marks.optionPaint !== undefined, null, { timeout: 60000, polling: 50 });
  // Whatever the page caches (a service worker, HTTP caches) settles first.
  await sleep(5000);
  // Every request of the page and of its service worker (Playwright reports the worker's with
  // PW_EXPERIMENTAL_SERVICE_WORKER_NETWORK_EVENTS, set below): one answered by a worker is not
  // on the network; the worker's own fetches are.
  const fetched = [];
  const pending = [];
  context.on("requestfinished", (req) => pending.push((async () => {
    const url = req.url();
    if (url.startsWith("data:")) return;
    const resp = await req.response();
    if (!resp || resp.fromServiceWorker()) return;
    const sizes = await req.sizes().catch(() => ({ responseBodySize: 0, responseHeadersSize: 0 }));
    fetched.push({ url: new URL(url).pathname + (req.serviceWorker() ? " (by the service worker)" : ""), bytes: sizes.responseBodySize + sizes.responseHeadersSize });
  })()));
  const second = await raiseQuestion(agent, `Warm repeat second ${Date.now()}?`);
  await page.goto(`${gw.http}/ask/${encodeURIComponent(second)}#token=${TOKEN}`);
  await page.waitForFunction(() => window.__bench.marks.optionPaint !== undefined, null, { timeout: 60000, polling: 50 });
  await sleep(3000);
  await Promise.all(pending);
  await context.close();
  await resolveQuestion(agent, first).catch(() => {});
  await resolveQuestion(agent, second).catch(() => {});
  const files = fetched.map((f) => f.url);
  return { files, bytes: fetched.reduce((a, f) => a + f.bytes, 0) };
}

// ---------- 2. question arrival (frame on the socket) to the painted panel ----------
async function arrival(gw, agent, n, pathSuffix = "/") {
  const { context, page } = await newPage();
  await page.addInitScript(INSTRUMENT);
  await page.goto(`${gw.http}${pathSuffix}#token=${TOKEN}`);
  await page.waitForFunction(() => document.body.innerText.includes("Connected") || document.querySelector("textarea"), null, { timeout: 60000 });
  await sleep(1500);
  const samples = [];
  for (let i = 0; i < n; i++) {
    const title = `Arrival probe ${i} ${Math.random().toString(36).slice(2, 8)}?`;
    await page.evaluate((title) => {
      const B = window.__bench;
      B.frames = []; B.watchFrame = title; B.marks.panel = undefined;
      const seen = () => [...document.querySelectorAll("body *")].some((el) => el.childElementCount === 0 && el.textContent.includes(title) && el.getClientRects().length);
      const mo = new MutationObserver(() => {
        if (seen()) { mo.disconnect(); requestAnimationFrame(() => { B.marks.panel = performance.now(); }); }
      });
      mo.observe(document.body, { subtree: true, childList: true, characterData: true });
    }, title);
    const id = await raiseQuestion(agent, title);
    await page.waitForFunction(() => window.__bench.marks.panel !== undefined && window.__bench.frames.length > 0, null, { timeout: 20000, polling: 10 });
    const { t0, t1 } = await page.evaluate(() => ({ t0: window.__bench.frames[0].t, t1: window.__bench.marks.panel }));
    samples.push(t1 - t0);
    await resolveQuestion(agent, id);
    await page.waitForFunction((title) => !document.querySelector("[data-testid=question-panel]")?.textContent.includes(title), title, { timeout: 20000, polling: 20 }).catch(() => {});
    await sleep(30);
  }
  await context.close();
  return samples;
}

// ---------- 7. approval arrival (exec.approval.requested on the socket) to the painted card ----------
// The backend's request is two-phase: its first response ("accepted") resolves the request here;
// the decision, later, is a second response with the same id that nobody waits for.
async function approvalArrival(gw, agent, n) {
  const { context, page } = await newPage();
  await page.addInitScript(INSTRUMENT);
  await page.goto(`${gw.http}/#token=${TOKEN}`);
  await page.waitForFunction(() => document.querySelector("[data-testid=connection-status]")?.textContent === "Connected", null, { timeout: 60000 });
  await sleep(1500);
  const samples = [];
  for (let i = 0; i < n; i++) {
    const command = `echo approval-probe-${i}-${Math.random().toString(36).slice(2, 8)}`;
    await page.evaluate((command) => {
      const B = window.__bench;
      B.frames = []; B.watchFrame = command; B.marks.card = undefined;
      const seen = () => [...document.querySelectorAll("[data-testid=approval-command]")].some((el) => el.textContent === command && el.getClientRects().length);
      const mo = new MutationObserver(() => {
        if (seen()) { mo.disconnect(); requestAnimationFrame(() => { B.marks.card = performance.now(); }); }
      });
      mo.observe(document.body, { subtree: true, childList: true, characterData: true });
    }, command);
    const r = await agent.request("exec.approval.request", { command, host: "gateway", sessionKey: "agent:main:main", agentId: "main", timeoutMs: 120000, twoPhase: true });
    if (!r.ok || r.payload.deliveryRoute !== "approval-client") throw new Error(`exec.approval.request not routed to the page: ${JSON.stringify(r)}`);
    await page.waitForFunction(() => window.__bench.marks.card !== undefined && window.__bench.frames.length > 0, null, { timeout: 20000, polling: 10 });
    const { t0, t1 } = await page.evaluate(() => ({ t0: window.__bench.frames[0].t, t1: window.__bench.marks.card }));
    samples.push(t1 - t0);
    await agent.request("approval.resolve", { id: r.payload.id, kind: "exec", decision: "deny" });
    await page.waitForFunction(() => !document.querySelector("[data-testid=approval-card]"), null, { timeout: 20000, polling: 20 }).catch(() => {});
    await sleep(30);
  }
  await context.close();
  return samples;
}

// ---------- 3. next-request arrow with 200 pending requests, each with a draft ----------
async function navigation(gw, agent, n) {
  const ids = [];
  for (let i = 0; i < n; i++) ids.push(await raiseQuestion(agent, `Navigation ${i}?`));
  const { context, page } = await newPage();
  await page.goto(`${gw.http}/#token=${TOKEN}`);
  await page.getByText(`Request 1/${n}`).waitFor({ timeout: 60000 });
  await page.evaluate(() => {
    window.__nav = [];
    document.addEventListener("click", (e) => {
      if (!e.target.closest || !e.target.closest('[aria-label="Next request"]')) return;
      const t0 = performance.now();
      const mo = new MutationObserver(() => { mo.disconnect(); requestAnimationFrame(() => window.__nav.push(performance.now() - t0)); });
      mo.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    }, true);
  });
  const next = page.getByRole("button", { name: "Next request" });
  // first pass: give every request a draft (pick an option, type a note)
  for (let i = 0; i < n; i++) {
    await page.getByRole("radio", { name: "Beta" }).check();
    await next.click();
  }
  const firstPass = await page.evaluate(() => window.__nav.splice(0));
  // second pass: every request now has a draft to restore
  for (let i = 0; i < n; i++) await next.click();
  await page.waitForFunction((n) => window.__nav.length >= n, n, { timeout: 30000 });
  const secondPass = await page.evaluate(() => window.__nav.splice(0));
  const kept = await page.getByRole("radio", { name: "Beta" }).isChecked();
  await context.close();
  for (const id of ids) await resolveQuestion(agent, id).catch(() => {});
  return { firstPass, secondPass, kept };
}

// ---------- 4. long conversation ----------
async function seedConversation(gwFactory, messages) {
  // one real exchange gives a user and an assistant row; SQLite copies them to `messages` rows
  let gw = gwFactory();
  await waitHttp(gw.port);
  const c = await connectRetry(gw.url, TOKEN);
  const fin = c.waitEvent((f) => f.event === "chat" && f.payload.state === "final");
  await c.request("chat.send", { sessionKey: "bench-long", message: "Message 0", idempotencyKey: "seed-0" });
  await fin;
  c.close();
  await gw.stop();
  const pairs = Math.floor((messages - 2) / 2);
  execFileSync("sqlite3", [path.join(gw.dataDir, "gateway.sqlite"), `
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${pairs})
    INSERT INTO messages (session_key, seq, id, role, idempotency_key, json, created_ms)
    SELECT m.session_key, m.seq + 2 * n.i, m.id || '-' || n.i, m.role, NULL,
      CASE m.role WHEN 'user'
        THEN json_set(json_remove(m.json, '$.idempotencyKey', '$.__openclaw.idempotencyKey'), '$.content', 'Message ' || n.i || ': how does the deploy look?', '$.__openclaw.seq', m.seq + 2 * n.i, '$.__openclaw.id', m.id || '-' || n.i)
        ELSE json_set(m.json, '$.content[0].text', 'Reply ' || n.i || ': the deploy looks fine; nothing to do.', '$.__openclaw.seq', m.seq + 2 * n.i, '$.__openclaw.id', m.id || '-' || n.i)
      END, m.created_ms
    FROM messages m, n;`]);
  return 2 + 2 * pairs;
}

async function longConversation(gw, total, deltas) {
  const agent = await connectRetry(gw.url, TOKEN);
  const renders = [];
  const lastText = `Reply ${Math.floor((total - 2) / 2)}:`;
  for (let r = 0; r < 3; r++) {
    const { context, page } = await newPage();
    await page.addInitScript(INSTRUMENT);
    await page.addInitScript((lastText) => {
      new MutationObserver((_, mo) => {
        if (document.body && document.body.innerText.includes(lastText)) { mo.disconnect(); requestAnimationFrame(() => { window.__bench.marks.lastShown = performance.now(); }); }
      }).observe(document, { subtree: true, childList: true, characterData: true });
    }, lastText);
    await page.goto(`${gw.http}/?session=bench-long#token=${TOKEN}`);
    await page.waitForFunction(() => window.__bench.marks.lastShown !== undefined, null, { timeout: 60000 });
    renders.push(await page.evaluate(() => window.__bench.marks.lastShown));
    if (r < 2) await context.close();
    else {
      // streamed deltas: the demo agent's "slow" run streams a delta every 500 ms
      await page.evaluate(() => {
        const B = window.__bench;
        B.watchFrame = '"delta"'; B.frames = []; B.deltaPaints = [];
        // a delta counts as painted at the first rendering update whose DOM shows its text
        B.onFrame = (f) => {
          const want = (JSON.parse(f.data).payload?.deltaText ?? "").trim();
          if (!want) return;
          const tick = () => {
            if ([...document.querySelectorAll("[data-testid=stream]")].some((el) => el.textContent.includes(want))) B.deltaPaints.push(performance.now() - f.t);
            else requestAnimationFrame(tick);
          };
          requestAnimationFrame(tick);
        };
      });
      const samples = [];
      while (samples.length < deltas) {
        const fin = agent.waitEvent((f) => f.event === "chat" && f.payload.state === "final", 60000);
        await agent.request("chat.send", { sessionKey: "bench-long", message: "slow please", idempotencyKey: `slow-${Date.now()}` });
        await fin;
        await sleep(300);
        const got = await page.evaluate(() => ({ frames: window.__bench.frames.length, paints: window.__bench.deltaPaints.splice(0) }));
        if (!got.frames) throw new Error("no delta frames reached the page");
        samples.push(...got.paints);
        await page.evaluate(() => { window.__bench.frames = []; });
      }
      const domNodes = await page.evaluate(() => document.getElementsByTagName("*").length);
      await context.close();
      agent.close();
      return { renders, deltas: samples, domNodes };
    }
  }
}

// ---------- 10. a command that prints 20,000 lines as fast as it can (a real run) ----------
// The real gateway runs a real turn against the scripted model (`e2e/src/bin/scripted-model.rs`):
// the run asks to run `sh flood.sh`, the page allows it, and the command prints 20,000 lines.
// Measured in the page: the interval between painted frames from the click on Allow once until
// the run's reply is shown (p95, max), and the JS heap after a GC once it is done.
async function commandFlood(gw, workspace, modelUrl) {
  const agent = await connectRetry(gw.url, TOKEN);
  await configPatch(agent, {
    models: { mode: "merge", providers: { scripted: { baseUrl: modelUrl, apiKey: "bench", api: "openai-completions", timeoutSeconds: 120,
      models: [{ id: "scripted", name: "Scripted", reasoning: true, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 4096 }] } } },
    agents: { defaults: { model: { primary: "scripted/scripted" } } },
    tools: { exec: { mode: "ask" } },
  });
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(path.join(workspace, "flood.sh"), "#!/bin/sh\nseq -f 'flood line %g: the quick brown fox jumps over the lazy dog' 1 20000\n");
  const { context, page, cdp } = await newPage({ width: 1000, height: 900 });
  await page.goto(`${gw.http}/#token=${TOKEN}`);
  await page.waitForFunction(() => document.querySelector("[data-testid=connection-status]")?.textContent === "Connected", null, { timeout: 90000 });
  await page.fill("textarea[name=message]", "exec: sh flood.sh");
  await page.keyboard.press("Enter");
  const allow = page.getByRole("button", { name: "Allow once" });
  await allow.waitFor({ timeout: 60000 });
  await page.evaluate(() => {
    const B = (window.__flood = { frames: [], done: false });
    let last = performance.now();
    const tick = (t) => { B.frames.push(t - last); last = t; if (!B.done) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
  });
  await allow.click();
  try {
    await page.waitForFunction(() => {
      const done = [...document.querySelectorAll("[data-testid=message]")].some((m) => m.textContent.includes("The tool returned:") && m.textContent.includes("flood line"));
      if (done) window.__flood.done = true;
      return done;
    }, null, { timeout: 180000, polling: 200 });
  } catch (e) {
    await page.screenshot({ path: path.join(OUT, "flood-timeout.png") });
    const text = await page.evaluate(() => document.querySelector(".transcript")?.innerText ?? "");
    throw new Error(`the flood run's reply never showed (screenshot target/bench/flood-timeout.png); the transcript ends:\n${text.slice(-1500)}`);
  }
  const frames = await page.evaluate(() => window.__flood.frames.slice(1));
  await cdp.send("HeapProfiler.collectGarbage");
  const heap = (await cdp.send("Runtime.getHeapUsage")).usedSize;
  const shownLines = await page.evaluate(() => Math.max(0, ...[...document.querySelectorAll("[data-testid=tool-call][data-tool=exec] pre")].map((p) => p.textContent.split("\n").length)));
  const domNodes = await page.evaluate(() => document.getElementsByTagName("*").length);
  await context.close();
  agent.close();
  return { frames, heap, shownLines, domNodes };
}

// ---------- 5. outbox recovery: 1,000 rows in IndexedDB, reload, every row shown ----------
async function outboxRecovery(gw, rowsN, runs) {
  const { context, page } = await newPage();
  await page.addInitScript((n) => {
    const want = `${n} unsent messages`;
    new MutationObserver((_, mo) => {
      if (document.getElementById("tray-title")?.textContent === want) { mo.disconnect(); requestAnimationFrame(() => { window.__outboxShown = performance.now(); }); }
    }).observe(document, { subtree: true, childList: true, characterData: true });
  }, rowsN);
  await page.goto(`${gw.http}/?session=bench-outbox#token=${TOKEN}`);
  await page.locator("textarea").waitFor({ timeout: 60000 });
  await sleep(1000);
  // the gateway is gone (same origin, so the same IndexedDB, but no WebSocket): the rows
  // must come back from IndexedDB alone
  await gw.stop();
  const staticOnly = await serveStaticOnly(gw.port);
  const expected = await page.evaluate(async (n) => {
    const db = await new Promise((res, rej) => { const r = indexedDB.open("ocui"); r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
    const tx = db.transaction("outbox", "readwrite");
    const store = tx.objectStore("outbox");
    const now = Date.now();
    const counts = { queued: 0, failed: 0 };
    for (let i = 0; i < n; i++) {
      const failed = i % 4 === 3;
      const row = { id: `bench-row-${i}`, sessionKey: "agent:main:bench-outbox", text: `Outbox message ${i}`, idempotencyKey: `bench-idem-${i}`,
        createdMs: now - (n - i) * 10, order: i, ...(failed ? { state: "failed", reason: "the gateway refused it (bench)" } : { state: "queued" }), attempts: failed ? 1 : 0 };
      counts[failed ? "failed" : "queued"]++;
      store.put(JSON.stringify(row), row.id);
    }
    await new Promise((res, rej) => { tx.oncomplete = res; tx.onerror = () => rej(tx.error); });
    db.close();
    return counts;
  }, rowsN);
  const samples = [];
  let shown = null;
  for (let r = 0; r < runs; r++) {
    await page.reload();
    await page.waitForFunction(() => window.__outboxShown !== undefined, null, { timeout: 120000, polling: 50 });
    samples.push(await page.evaluate(() => window.__outboxShown));
    shown = await page.evaluate(() => {
      const rows = [...document.querySelectorAll("[data-testid=tray-row]")];
      const failed = rows.filter((r) => /fail|refused/i.test(r.querySelector(".tray__status")?.textContent ?? "")).length;
      return { rows: rows.length, failed, retry: rows.filter((r) => [...r.querySelectorAll("button")].some((b) => b.textContent === "Retry")).length };
    });
  }
  await context.close();
  await staticOnly.stop();
  return { expected, samples, shown };
}

// ---------- 6. gateway round trips ----------
async function roundTrips(url, clients, seconds) {
  const conns = [];
  for (let i = 0; i < clients; i++) conns.push(await connectRetry(url, TOKEN, { name: `rt${i}` }));
  // events for ids we have not learned yet are kept until the response names the id
  const seen = conns.map((c) => { const s = { requested: new Set(), resolved: new Set(), waiters: new Map() };
    c.onEvent((f) => {
      const kind = f.event === "question.requested" ? "requested" : f.event === "question.resolved" ? "resolved" : null;
      if (!kind) return;
      const key = `${kind}:${f.payload.id}`;
      s[kind].add(f.payload.id);
      s.waiters.get(key)?.(); s.waiters.delete(key);
    });
    return s; });
  const waitFor = (s, kind, id) => s[kind].has(id) ? Promise.resolve() : new Promise((res) => s.waiters.set(`${kind}:${id}`, res));
  let rounds = 0, failures = 0;
  const lat = [];
  const end = Date.now() + seconds * 1000;
  await Promise.all(conns.map(async (c, i) => {
    while (Date.now() < end) {
      const t0 = performance.now();
      try {
        const r = await c.request("question.request", questionParams(`rt ${i}`, { timeoutMs: 60000 }));
        if (!r.ok) { failures++; continue; }
        const id = r.payload.id;
        await waitFor(seen[i], "requested", id);
        const s = await c.request("question.resolve", { id, answers: { answers: { q1: ["Alpha"] } } });
        if (!s.ok) { failures++; continue; }
        await waitFor(seen[i], "resolved", id);
        seen[i].requested.delete(id); seen[i].resolved.delete(id);
        rounds++;
        lat.push(performance.now() - t0);
      } catch { failures++; }
    }
  }));
  for (const c of conns) c.close();
  return { perSecond: rounds / seconds, p50: median(lat), p95: quantile(lat, 0.95), failures };
}

// ---------- main ----------
const rows = [];
const add = (benchmark, metric, ours, theirs, fmt) => rows.push({ benchmark, metric, ours: fmt(ours), theirs: theirs === undefined ? "—" : fmt(theirs), ratio: theirs === undefined ? "—" : ratio(ours, theirs) });
const notes = [];
const rt = { real: {}, local: {} };

process.env.PW_EXPERIMENTAL_SERVICE_WORKER_NETWORK_EVENTS = "1";
browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", headless: true,
  args: ["--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync", "--enable-precise-memory-info"] });
const cleanups = [];
process.on("SIGINT", async () => { for (const c of cleanups) await c(); process.exit(130); });
try {
  if (ONLY.has(1) || ONLY.has(6) || ONLY.has(7) || ONLY.has(8) || ONLY.has(9) || ONLY.has(10)) {
    const uiCopy = path.join(OUT, "ui");
    fs.rmSync(uiCopy, { recursive: true, force: true });
    fs.cpSync(path.join(REPO, "dist"), uiCopy, { recursive: true });
    log("starting two real gateways (ours through gateway.controlUi.root, and the bundled UI)");
    const [ours, bundled] = await Promise.all([startReal("ours", 18931, uiCopy), startReal("bundled", 18932, null)]);
    cleanups.push(() => ours.stop(), () => bundled.stop());
    const agents = { ours: await connectRetry(ours.url, TOKEN), bundled: await connectRetry(bundled.url, TOKEN) };
    if (ONLY.has(1)) {
      const res = { ours: [], bundled: [] };
      for (const gw of [ours, bundled]) await coldLoad(gw, agents[gw.name], "warmup"); // gateway-side caches, not the browser's
      for (let r = 0; r < RUNS; r++) {
        const order = r % 2 === 0 ? [ours, bundled] : [bundled, ours];
        for (const gw of order) res[gw.name].push(await coldLoad(gw, agents[gw.name], `${gw.name}-${r}`));
        log(`cold load run ${r + 1}/${RUNS}: ours ${res.ours.at(-1).ready.toFixed(0)} ms, bundled ${res.bundled.at(-1).ready.toFixed(0)} ms`);
      }
      const m = (k, who) => median(res[who].map((x) => x[k]));
      add("1. Cold load `/ask/<id>` (real gateway)", "navigation → first option enabled and painted", m("ready", "ours"), m("ready", "bundled"), fmtMs);
      add("", "bytes transferred (as the real gateway sends them)", m("bytes", "ours"), m("bytes", "bundled"), fmtKB);
      add("", "the same files decoded", m("decoded", "ours"), m("decoded", "bundled"), fmtKB);
      add("", "the same files, gzip -9 (like for like)", m("gzipped", "ours"), m("gzipped", "bundled"), fmtKB);
      add("", "ours as the real gateway sends it ÷ the incumbent decoded", m("bytes", "ours"), m("decoded", "bundled"), fmtKB);
      add("", "requests", m("requests", "ours"), m("requests", "bundled"), (x) => String(Math.round(x)));
      add("", "JS heap after settling (GC'd)", m("heap", "ours"), m("heap", "bundled"), fmtMB);
      add("", "ArrayBuffer/wasm backing stores", m("buffers", "ours"), m("buffers", "bundled"), fmtMB);
      const foreign = [...new Set(res.ours.flatMap((x) => x.origins))].filter((o) => o !== ours.http);
      notes.push(`Cold load: our page requested ${foreign.length ? "OTHER origins: " + foreign.join(", ") : "nothing outside the gateway's origin"}.`);
    }
    if (ONLY.has(8)) {
      // The gateways' first cold loads after they start are the slowest (their own warm-up).
      if (!ONLY.has(1)) for (const gw of [ours, bundled]) await coldLoad(gw, agents[gw.name], "warmup");
      for (const link of LINKS) {
        const res = { ours: [], bundled: [] };
        for (let r = 0; r < RUNS; r++) {
          const order = r % 2 === 0 ? [ours, bundled] : [bundled, ours];
          for (const gw of order) res[gw.name].push(await coldLoad(gw, agents[gw.name], `${gw.name}-link-${r}`, link));
          log(`${link.name}, run ${r + 1}/${RUNS}: ours ${res.ours.at(-1).ready.toFixed(0)} ms, bundled ${res.bundled.at(-1).ready.toFixed(0)} ms`);
        }
        const m = (k, who) => median(res[who].map((x) => x[k]));
        add(`8. Cold load \`/ask/<id>\` over ${link.name} (real gateway)`, "navigation → first option enabled and painted", m("ready", "ours"), m("ready", "bundled"), fmtMs);
        add("", "bytes on the wire", m("bytes", "ours"), m("bytes", "bundled"), fmtKB);
      }
    }
    if (ONLY.has(9)) {
      const w = { ours: await warmRepeat(ours, agents.ours), bundled: await warmRepeat(bundled, agents.bundled) };
      add("9. Warm repeat visit `/ask/<id>` (real gateway, same browser)", "bytes fetched from the network", w.ours.bytes, w.bundled.bytes, fmtKB);
      add("", "files fetched from the network", w.ours.files.length, w.bundled.files.length, (x) => String(x));
      notes.push(`Warm repeat visit, what went to the network: ours ${w.ours.files.join(", ") || "nothing"}; the incumbent ${w.bundled.files.join(", ") || "nothing"}.`);
    }
    if (ONLY.has(7)) {
      const s7 = await approvalArrival(ours, agents.ours, 60);
      add("7. `exec.approval.requested` frame → card painted (real gateway serving ours, 60 approvals)", "p50", median(s7), undefined, fmtMs);
      add("", "p95", quantile(s7, 0.95), undefined, fmtMs);
      add("", "max", Math.max(...s7), undefined, fmtMs);
    }
    if (ONLY.has(6)) {
      for (const clients of [1, 50]) {
        // both real gateways run the same code; the one serving the bundled UI stands for it
        const r = await roundTrips(bundled.url, clients, RT_SECONDS);
        rt.real[clients] = r;
        if (r.failures) notes.push(`Round trips on the real gateway with ${clients} clients: ${r.failures} refused or failed requests.`);
      }
    }
    if (ONLY.has(10)) {
      const model = spawn(path.join(REPO, "target/gateway/scripted-model"), ["0"], { stdio: ["ignore", "pipe", "inherit"] });
      cleanups.push(async () => model.kill());
      const modelUrl = await new Promise((resolve, reject) => {
        model.stdout.on("data", (d) => { const m = String(d).match(/SCRIPTED_MODEL_URL=(\S+)/); if (m) resolve(m[1]); });
        model.once("exit", (c) => reject(new Error(`the scripted model exited (${c})`)));
      });
      const r = await commandFlood(ours, path.join(OUT, "real-ours", "state", "workspace"), modelUrl);
      add("10. A real run's command prints 20,000 lines as fast as it can (real gateway, scripted model)", "painted frame interval p95, Allow once → reply shown", quantile(r.frames, 0.95), undefined, fmtMs);
      add("", "longest frame", Math.max(...r.frames), undefined, fmtMs);
      add("", "JS heap after it ended (GC'd)", r.heap, undefined, fmtMB);
      notes.push(`Command flood: ${r.frames.length} frames painted while it ran; the result card shows ${r.shownLines} lines; ${r.domNodes} DOM elements after it.`);
      model.kill();
    }
    for (const a of Object.values(agents)) a.close();
    await Promise.all([ours.stop(), bundled.stop()]);
    cleanups.length = 0;
  }
  if (ONLY.has(2) || ONLY.has(3) || ONLY.has(6)) {
    const local = startLocal(18941, path.join(OUT, "local-a"));
    cleanups.push(() => local.stop());
    await waitHttp(local.port);
    const agent = await connectRetry(local.url, TOKEN);
    if (ONLY.has(2)) {
      const s = await arrival(local, agent, 220);
      add("2. `question.requested` frame → panel painted (local gateway, 220 events)", "p50", median(s), undefined, fmtMs);
      add("", "p95", quantile(s, 0.95), undefined, fmtMs);
    }
    if (ONLY.has(3)) {
      const r = await navigation(local, agent, 200);
      add("3. Next-request arrow → next frame (200 pending, each with a draft)", "p50", median(r.secondPass), undefined, fmtMs);
      add("", "p95", quantile(r.secondPass, 0.95), undefined, fmtMs);
      if (!r.kept) notes.push("Navigation: a draft was NOT kept after two passes.");
    }
    if (ONLY.has(6)) {
      for (const clients of [1, 50]) {
        const r = await roundTrips(local.url, clients, RT_SECONDS);
        rt.local[clients] = r;
        if (r.failures) notes.push(`Round trips on our local gateway with ${clients} clients: ${r.failures} refused or failed requests.`);
      }
    }
    agent.close();
    await local.stop();
    cleanups.length = 0;
  }
  if (ONLY.has(4)) {
    const dataDir = path.join(OUT, "local-long");
    fs.rmSync(dataDir, { recursive: true, force: true });
    const total = await seedConversation(() => { const g = startLocal(18942, dataDir); return g; }, 5000);
    // restart on the seeded data (startLocal would wipe it, so spawn directly)
    const child = spawn(path.join(REPO, "target/gateway/gateway"), ["--port", "18942", "--data-dir", dataDir, "--ui-root", path.join(REPO, "dist")], { env: { ...process.env, TOKEN, TOKEN_FILE: "" }, stdio: "ignore" });
    const gw = { port: 18942, url: "ws://127.0.0.1:18942", http: "http://127.0.0.1:18942", async stop() { child.kill("SIGTERM"); await new Promise((r) => child.once("exit", r)); } };
    cleanups.push(() => gw.stop());
    await waitHttp(gw.port);
    const r = await longConversation(gw, total, 40);
    add(`4. Long conversation (${total} messages, local gateway)`, "navigation → newest message painted (median of 3)", median(r.renders), undefined, fmtMs);
    add("", `streamed delta frame → painted, p95 (${r.deltas.length} deltas)`, quantile(r.deltas, 0.95), undefined, fmtMs);
    notes.push(`Long conversation: ${r.domNodes} DOM elements on the page with ${total} messages in the session.`);
    await gw.stop();
    cleanups.length = 0;
  }
  if (ONLY.has(5)) {
    const gw = startLocal(18943, path.join(OUT, "local-outbox"));
    await waitHttp(gw.port);
    const r = await outboxRecovery(gw, 1000, RUNS);
    add("5. Outbox recovery (1,000 rows in IndexedDB, gateway unreachable)", "reload → all rows listed and painted", median(r.samples), undefined, fmtMs);
    notes.push(`Outbox recovery: seeded ${r.expected.queued} queued + ${r.expected.failed} failed rows; the tray listed ${r.shown.rows} rows, ${r.shown.failed} of them failed, ${r.shown.retry} with Retry.`);
  }
} finally {
  for (const c of cleanups) await c().catch?.(() => {});
  await browser.close();
}

if (ONLY.has(6)) {
  let first = true;
  for (const clients of [1, 50]) {
    const [l, r] = [rt.local[clients], rt.real[clients]];
    if (!l || !r) continue;
    const b = first ? "6. `question.request` → `requested` → `resolve` → `resolved` (same script; ours = our local gateway, incumbent = real gateway)" : "";
    first = false;
    add(b, `${clients} client${clients > 1 ? "s" : ""}: round trips per second`, l.perSecond, r.perSecond, (x) => x.toFixed(0) + "/s");
    add("", `${clients} client${clients > 1 ? "s" : ""}: round trip p50`, l.p50, r.p50, fmtMs);
    add("", `${clients} client${clients > 1 ? "s" : ""}: round trip p95`, l.p95, r.p95, fmtMs);
  }
}

const date = new Date().toISOString().slice(0, 10);
const cpu = os.cpus()[0]?.model ?? "unknown CPU";
const header = `Measured ${date} on ${os.cpus().length} cores (${cpu}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, headless Chromium ${browser.version?.() ?? ""}; real gateway openclaw ${path.basename(REAL_DIR).replace("openclaw-", "")}. Medians over ${RUNS} alternating runs unless stated.`;
const table = ["| Benchmark | Metric | Ours | Incumbent (bundled UI) | Ours ÷ incumbent |", "|---|---|---|---|---|",
  ...rows.map((r) => `| ${r.benchmark} | ${r.metric} | ${r.ours} | ${r.theirs} | ${r.ratio} |`)].join("\n");
const md = `${header}\n\n${table}\n\n${notes.map((n) => `- ${n}`).join("\n")}\n`;
fs.writeFileSync(path.join(OUT, "bench.md"), md);
console.log(md);
