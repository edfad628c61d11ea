// temporary: where the time goes on a cold load over 10 Mbit/s 40 ms
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import fs from "node:fs"; import os from "node:os"; import path from "node:path";
import { fileURLToPath } from "node:url";
import { connectRetry, raiseQuestion } from "./gw.mjs";
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const REAL_DIR = process.env.OPENCLAW_REAL_DIR;
const SCRIPT = path.join(REPO, "..", "shared", "tools/openclaw-gateway/run-real-gateway.sh");
const require = createRequire(path.join(REAL_DIR, "app/node_modules/openclaw/package.json"));
const { chromium } = require("playwright-core");
const TOKEN = "BENCH"; const port = 18977;
const dir = "/tmp/probe/real"; fs.rmSync(dir, { recursive: true, force: true }); fs.mkdirSync(dir, { recursive: true });
fs.symlinkSync(path.join(REAL_DIR, "node"), path.join(dir, "node")); fs.symlinkSync(path.join(REAL_DIR, "app"), path.join(dir, "app"));
const env = { ...process.env, PORT: String(port), TOKEN, CONTROL_UI_ROOT: path.join(REPO, process.env.DIST ?? "dist") };
execFileSync("bash", [SCRIPT, dir, "start"], { env, stdio: ["ignore", "ignore", "inherit"] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
for (let i = 0; i < 300; i++) { try { await fetch(`http://127.0.0.1:${port}/`); break; } catch { await sleep(200); } }
try {
  const agent = await connectRetry(`ws://127.0.0.1:${port}`, TOKEN);
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
  for (const [mbit, rtt] of (process.env.LINKS ?? "10,40;0,0").split(";").map((s) => s.split(",").map(Number))) {
  for (let run = 0; run < 2; run++) {
    const id = await raiseQuestion(agent, `Probe ${Date.now()}?`);
    const context = await browser.newContext(); const page = await context.newPage();
    const cdp = await context.newCDPSession(page); await cdp.send("Network.enable");
    if (mbit) await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: rtt, downloadThroughput: mbit * 1e6 / 8, uploadThroughput: mbit * 1e6 / 8 });
    await page.addInitScript(() => {
      const B = (window.__p = { ev: [] }); const t = () => Math.round(performance.now());
      const O = window.WebSocket;
      window.WebSocket = class extends O { constructor(...a) { super(...a); B.ev.push([t(), "ws new"]); this.addEventListener("open", () => B.ev.push([t(), "ws open"]));
        this.addEventListener("message", (e) => { const m = String(e.data).slice(0, 300); const j = (() => { try { return JSON.parse(e.data); } catch { return {}; } })(); B.ev.push([t(), "<- " + (j.event ?? (j.ok !== undefined ? "res " + j.id : "")) + " " + m.length]); }); }
        send(d) { const j = (() => { try { return JSON.parse(d); } catch { return {}; } })(); B.ev.push([t(), "-> " + (j.method ?? "?") + " " + j.id]); return super.send(d); } };
      addEventListener("TrunkApplicationStarted", () => B.ev.push([t(), "app started"]));
      const chk = () => { if (!B.done && [...document.querySelectorAll("label,button")].some((e) => e.textContent.includes("Alpha"))) { B.done = 1; B.ev.push([t(), "option ready"]); } };
      new MutationObserver(chk).observe(document, { subtree: true, childList: true, characterData: true });
    });
    await page.goto(`http://127.0.0.1:${port}/ask/${encodeURIComponent(id)}#token=${TOKEN}`);
    await page.waitForFunction(() => window.__p.done, null, { timeout: 60000 });
    await sleep(300);
    const out = await page.evaluate(() => ({ ev: window.__p.ev, res: performance.getEntriesByType("resource").map((e) => [Math.round(e.startTime), Math.round(e.responseEnd), e.name.split("/").pop().slice(0, 40), e.transferSize]), nav: performance.getEntriesByType("navigation").map((e) => [Math.round(e.responseStart), Math.round(e.responseEnd), Math.round(e.domInteractive)]) }));
    if (run === 1) { console.log(`--- ${mbit} Mbit ${rtt} ms`); console.log("nav", JSON.stringify(out.nav)); for (const r of out.res) console.log("res", JSON.stringify(r)); for (const e of out.ev) console.log(e[0], e[1]); }
    await context.close();
  } }
  await browser.close(); agent.close?.();
} finally { execFileSync("bash", [SCRIPT, dir, "stop"], { env, stdio: "ignore" }); }
process.exit(0);
