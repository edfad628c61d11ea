#!/usr/bin/env node
// Test harness (not product code): probe the session/conversation surface of the REAL OpenClaw
// gateway (npm openclaw@2026.9.6) over WebSocket protocol v4, without an LLM.
// Node >= 22 (built-in WebSocket), no npm packages. Loopback URLs only.
//
//   node sessions-probe.mjs [--url ws://127.0.0.1:18950] [--token TEST] [--frames FILE.jsonl]
//                           [--big-kb 200]
//
// Use a FRESH gateway (own state dir): the probe creates, archives and deletes sessions.
// Findings are written up in docs/sessions-protocol-notes.md.
//
// Connections:
//   "admin":  trusted loopback backend (client.id "gateway-client", mode "backend", shared token,
//             no device), scopes operator.admin/read/write. Used for chat.inject and admin-only calls.
//   "ui":     "openclaw-control-ui" (mode webchat, buildId "dev", Origin header, signed v3 Ed25519
//             device, auto-paired on loopback), scopes operator.read/write/approvals/questions (no
//             admin) = what our UI requests. It runs sessions.subscribe and records sessions.changed.
//   "reader": "cli" (mode cli, no Origin, no device, shared token), scopes [operator.read] only,
//             to check which methods need operator.write.
// Output: one line per frame (long strings trimmed); --frames writes every frame untrimmed
// as {conn, dir, frame} (dir "out" = client -> gateway).
import crypto from "node:crypto";
import fs from "node:fs";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => {
    if (a.startsWith("--")) acc.push([a.slice(2), all[i + 1]?.startsWith("--") || all[i + 1] === undefined ? "1" : all[i + 1]]);
    return acc;
  }, []),
);
const URL_ = args.url ?? "ws://127.0.0.1:18950";
const TOKEN = args.token ?? "TEST";
const BIG_KB = Number(args["big-kb"] ?? 200);
const PHASE = args.phase ?? "all"; // all | extras (extras only: slash commands, incumbent /new params, derived titles)
const host = new URL(URL_).hostname;
if (!["127.0.0.1", "localhost", "[::1]", "::1"].includes(host)) {
  console.error(`refusing non-loopback gateway URL: ${URL_}`);
  process.exit(2);
}
const ORIGIN = `http://${new URL(URL_).host}`;
const FRAMES = args.frames ?? null;
if (FRAMES) fs.writeFileSync(FRAMES, "");
const NOISE = new Set(["tick", "health", "presence", "heartbeat", "models.snapshot"]);

// Trim long strings for the console (frames file keeps everything).
function trim(v, max = 160) {
  if (typeof v === "string") return v.length > max ? `${v.slice(0, max)}…<${v.length} chars>` : v;
  if (Array.isArray(v)) return v.map((x) => trim(x, max));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, trim(x, max)]));
  return v;
}
function slimHello(p) {
  return { type: p.type, protocol: p.protocol, server: p.server, auth: { ...p.auth, deviceToken: p.auth?.deviceToken ? "…" : undefined },
    features: `{methods:${p.features?.methods?.length}, events:${p.features?.events?.length}}`, snapshot: `{${Object.keys(p.snapshot ?? {}).join(",")}}` };
}
function record(conn, dir, frame) {
  let f = frame;
  if (f.type === "res" && f.payload?.type === "hello-ok") f = { ...f, payload: slimHello(f.payload) };
  if (FRAMES) fs.appendFileSync(FRAMES, JSON.stringify({ conn, dir, frame: f }) + "\n");
  if (f.type === "event" && NOISE.has(f.event)) return;
  if (f.type === "event" && conn !== "ui") return; // events are shown for the subscribed UI connection only
  if (f.type === "event" && !["sessions.changed", "chat", "session.message"].includes(f.event)) {
    console.log(`${conn} ${dir} event ${f.event} (payload keys: ${Object.keys(f.payload ?? {}).join(",")})`);
    return;
  }
  console.log(`${conn} ${dir} ${JSON.stringify(trim(f))}`);
}

// ---- device identity (Ed25519; id = sha256(raw public key) hex) ----
function newIdentity() {
  const { publicKey, privateKey } = crypto.generateKeyPairSync("ed25519");
  const raw = publicKey.export({ type: "spki", format: "der" }).subarray(12);
  return { deviceId: crypto.createHash("sha256").update(raw).digest("hex"), publicKey: raw.toString("base64url"), privateKey };
}
function signDevice(identity, { client, role, scopes, nonce, ts }) {
  const payload = ["v3", identity.deviceId, client.id, client.mode, role, scopes.join(","), String(ts), TOKEN, nonce,
    (client.platform ?? "").trim().toLowerCase(), (client.deviceFamily ?? "").trim().toLowerCase()].join("|");
  return { id: identity.deviceId, publicKey: identity.publicKey,
    signature: crypto.sign(null, Buffer.from(payload, "utf8"), identity.privateKey).toString("base64url"), signedAt: ts, nonce };
}

const KINDS = {
  admin: { client: { id: "gateway-client", version: "sessions-probe", platform: "linux", mode: "backend" },
    scopes: ["operator.admin", "operator.read", "operator.write"], device: false, origin: false },
  ui: { client: { id: "openclaw-control-ui", version: "sessions-probe", platform: "linux", mode: "webchat", buildId: "dev" },
    scopes: ["operator.read", "operator.write", "operator.approvals", "operator.questions"], device: true, origin: true },
  reader: { client: { id: "cli", version: "sessions-probe", platform: "linux", mode: "cli" },
    scopes: ["operator.read"], device: false, origin: false },
};

async function connect(name, deadlineMs = Date.now() + 90000) {
  for (;;) {
    try { return await connectOnce(name); } catch (e) {
      if (Date.now() > deadlineMs || (!e.retryAfterMs && !/ECONNREFUSED|closed 10(06|12|13)/.test(String(e.message)))) throw e;
      await new Promise((r) => setTimeout(r, Math.min(Math.max(e.retryAfterMs ?? 1000, 250), 5000)));
    }
  }
}
function connectOnce(name) {
  const kind = KINDS[name];
  const identity = kind.device ? newIdentity() : null;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(URL_, { headers: kind.origin ? { Origin: ORIGIN } : {} });
    const pending = new Map();
    const events = [];
    let seq = 0;
    const conn = {
      name, events,
      request(method, params) {
        const id = `${name}-${++seq}`;
        const frame = { type: "req", id, method, params };
        record(name, "out", frame);
        ws.send(JSON.stringify(frame));
        return new Promise((res) => pending.set(id, res));
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
        const device = identity ? signDevice(identity, { client: kind.client, role: "operator", scopes: kind.scopes, nonce, ts }) : undefined;
        const res = await conn.request("connect", { minProtocol: 4, maxProtocol: 4, client: kind.client, role: "operator",
          scopes: kind.scopes, caps: [], auth: { token: TOKEN }, ...(device ? { device } : {}), locale: "en-US", userAgent: "sessions-probe" });
        if (res.ok) { conn.ready = true; conn.hello = res.payload; resolve(conn); }
        else if (res.error?.retryable) reject(Object.assign(new Error(`${name}: retryable: ${res.error.message}`), { retryAfterMs: res.error.retryAfterMs ?? 1000 }));
        else reject(new Error(`${name}: connect failed: ${JSON.stringify(res.error)}`));
        return;
      }
      if (frame.type === "res" && pending.has(frame.id)) { pending.get(frame.id)(frame); pending.delete(frame.id); }
      if (frame.type === "event") events.push(frame);
    };
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function section(title) { console.log(`\n===== ${title} =====`); }
const summary = [];
function note(s) { summary.push(s); console.log(`NOTE: ${s}`); }
function rowBrief(r) {
  if (!r) return r;
  const pick = ["key", "sessionId", "kind", "label", "displayName", "derivedTitle", "lastMessagePreview", "isMain", "archived", "archivedAt",
    "hasActiveRun", "activeRunIds", "status", "updatedAt", "createdAt", "agentId"];
  return Object.fromEntries(pick.filter((k) => k in r).map((k) => [k, r[k]]));
}

const admin = await connect("admin");
const ui = await connect("ui");
const reader = await connect("reader");
console.log(`granted: admin=${admin.hello.auth.scopes} ui=${ui.hello.auth.scopes} reader=${reader.hello.auth.scopes}`);
console.log(`sessionDefaults: ${JSON.stringify(admin.hello.snapshot?.sessionDefaults)}`);
const adv = new Set(admin.hello.features.methods);
console.log(`advertised: ${["sessions.subscribe", "sessions.unsubscribe", "sessions.list", "sessions.create", "sessions.patch", "sessions.delete", "chat.abort", "sessions.abort", "chat.message.get", "chat.inject", "sessions.describe", "sessions.resolve"].map((m) => `${m}=${adv.has(m)}`).join(" ")}`);

let r;
if (PHASE === "all") {
// ---------------------------------------------------------------------------------------------
section("1. sessions.subscribe");
r = await ui.request("sessions.subscribe", {});
r = await ui.request("sessions.subscribe", { limit: 5, agentId: "main", includeDerivedTitles: true, includeLastMessage: true });
note(`subscribe with list params -> keys ${Object.keys(r.payload ?? {})}; list keys ${Object.keys(r.payload?.list ?? {})}`);
r = await reader.request("sessions.subscribe", {});
note(`reader (operator.read) sessions.subscribe ok=${r.ok}`);
r = await ui.request("sessions.unsubscribe", {});
note(`sessions.unsubscribe -> ok=${r.ok} ${JSON.stringify(r.error ?? r.payload)}`);
r = await ui.request("sessions.subscribe", {}); // re-subscribe in case unsubscribe existed

// ---------------------------------------------------------------------------------------------
section("2. sessions.list on a fresh gateway, and param validation");
r = await admin.request("sessions.list", { includeGlobal: true, includeUnknown: true, configuredAgentsOnly: true, limit: 200,
  includeDerivedTitles: true, includeLastMessage: true, ownerFirst: true, agentId: "main" });
note(`fresh list: count=${r.payload?.count} totalCount=${r.payload?.totalCount} keys=${Object.keys(r.payload ?? {})}`);
r = await admin.request("sessions.list", { bogus: 1 });
note(`unknown list param -> ${JSON.stringify(r.error)}`);
r = await admin.request("sessions.list", { includeArchived: true });
note(`includeArchived -> ${JSON.stringify(r.error)}`);
r = await admin.request("sessions.describe", { key: "agent:main:main" });
note(`describe main before use: ok=${r.ok} ${JSON.stringify(trim(r.error ?? rowBrief(r.payload?.session ?? r.payload)))}`);

// ---------------------------------------------------------------------------------------------
section("3. sessions.create (events on ui)");
ui.events.length = 0;
const c1 = await admin.request("sessions.create", { agentId: "main" });
await sleep(1500);
note(`create {agentId} -> ${JSON.stringify(trim({ ...c1.payload, entry: c1.payload?.entry ? `{${Object.keys(c1.payload.entry).join(",")}}` : undefined }))}`);
note(`ui events after create by admin: ${ui.events.filter((e) => !NOISE.has(e.event)).map((e) => `${e.event}:${e.payload?.reason}`).join(", ")}`);
const k1 = c1.payload?.key;
const c2 = await ui.request("sessions.create", { agentId: "main", label: "Probe Alpha" });
await sleep(800);
const k2 = c2.payload?.key;
note(`create with label -> key=${k2} ok=${c2.ok}`);
r = await ui.request("sessions.create", { agentId: "main", label: "Probe Alpha" });
note(`create duplicate label -> ok=${r.ok} ${JSON.stringify(r.error ?? { key: r.payload?.key })}`);
r = await ui.request("sessions.create", { agentId: "main", key: "probe-literal", label: "Literal key" });
note(`create with key "probe-literal" -> ok=${r.ok} ${JSON.stringify(r.error ?? { key: r.payload?.key })}`);
const kLit = r.payload?.key;
r = await ui.request("sessions.create", { agentId: "main", key: "probe-literal" });
note(`create same key again -> ok=${r.ok} ${JSON.stringify(r.error ?? { key: r.payload?.key, sessionId: r.payload?.sessionId })}`);
r = await ui.request("sessions.create", { agentId: "nope" });
note(`create unknown agent -> ${JSON.stringify(r.error ?? r.payload)}`);
r = await ui.request("sessions.create", { agentId: "main", label: "" });
note(`create empty label -> ${JSON.stringify(r.error)}`);
r = await ui.request("sessions.create", {});
note(`create {} -> ok=${r.ok} ${JSON.stringify(r.error ?? { key: r.payload?.key })}`);
const kEmpty = r.payload?.key;
r = await reader.request("sessions.create", { agentId: "main" });
note(`reader sessions.create -> ${JSON.stringify(r.error)}`);

// ---------------------------------------------------------------------------------------------
section("4. chat.send -> run start/end as seen in sessions.changed");
ui.events.length = 0;
r = await ui.request("chat.send", { sessionKey: k2, message: "hello from the probe about zebras", idempotencyKey: "probe-send-1" });
note(`chat.send ack: ${JSON.stringify(r.payload ?? r.error)}`);
await sleep(6000);
const changed = ui.events.filter((e) => e.event === "sessions.changed");
note(`sessions.changed during run: ${changed.map((e) => `${e.payload.reason}${e.payload.session ? `(hasActiveRun=${e.payload.session.hasActiveRun})` : ""}`).join(", ")}`);
for (const e of changed) console.log(`  sessions.changed keys: ${Object.keys(e.payload).join(",")}`);
r = await ui.request("chat.send", { sessionKey: "agent:main:main", message: "main hello", idempotencyKey: "probe-send-main" });
await sleep(5000);

// ---------------------------------------------------------------------------------------------
section("5. sessions.list rows, paging, search");
r = await ui.request("sessions.list", { agentId: "main", includeDerivedTitles: true, includeLastMessage: true });
note(`list total=${r.payload?.totalCount} count=${r.payload?.count} nextOffset=${r.payload?.nextOffset} hasMore=${r.payload?.hasMore}`);
for (const row of r.payload?.sessions ?? []) console.log(`  row ${JSON.stringify(rowBrief(row))}`);
const mainRow = (r.payload?.sessions ?? []).find((x) => x.key === "agent:main:main");
if (mainRow) console.log(`  main row keys: ${Object.keys(mainRow).join(",")}`);
r = await ui.request("sessions.list", { agentId: "main", limit: 2 });
note(`limit 2: count=${r.payload?.count} totalCount=${r.payload?.totalCount} nextOffset=${r.payload?.nextOffset} hasMore=${r.payload?.hasMore} limitApplied=${r.payload?.limitApplied} offset=${r.payload?.offset}`);
r = await ui.request("sessions.list", { agentId: "main", limit: 2, offset: 2 });
note(`limit 2 offset 2: count=${r.payload?.count} nextOffset=${r.payload?.nextOffset} hasMore=${r.payload?.hasMore} keys=${(r.payload?.sessions ?? []).map((s) => s.key)}`);
r = await ui.request("sessions.list", { agentId: "main", limit: 2, offset: 4 });
note(`limit 2 offset 4: count=${r.payload?.count} nextOffset=${r.payload?.nextOffset} hasMore=${r.payload?.hasMore}`);
for (const q of ["alpha", "ALPHA", "probe-lit", k2?.slice(-8), "zebras", "running", "idle", "main", "Literal"]) {
  r = await ui.request("sessions.list", { agentId: "main", search: q, includeDerivedTitles: true });
  note(`search ${JSON.stringify(q)} -> ${(r.payload?.sessions ?? []).map((s) => s.key).join(" ") || "(none)"}`);
}
r = await ui.request("sessions.list", { agentId: "main", label: "Probe Alpha" });
note(`label filter exact -> ${(r.payload?.sessions ?? []).map((s) => s.key).join(" ") || "(none)"}`);

// ---------------------------------------------------------------------------------------------
section("6. sessions.patch label / archived");
const desc = await ui.request("sessions.describe", { key: k2 });
const sid2 = desc.payload?.session?.sessionId ?? desc.payload?.sessionId;
note(`describe keys: ${Object.keys(desc.payload ?? {})}; sessionId=${sid2}`);
ui.events.length = 0;
r = await ui.request("sessions.patch", { key: k2, label: "Probe Renamed" });
await sleep(800);
note(`patch label -> ${JSON.stringify(trim(r.ok ? Object.fromEntries(Object.entries(r.payload).map(([k, v]) => [k, k === "entry" ? rowBrief(v) : v])) : r.error, 100))}`);
note(`events after patch label: ${ui.events.filter((e) => e.event === "sessions.changed").map((e) => JSON.stringify(trim({ ...e.payload, session: rowBrief(e.payload.session) }))).join(" | ")}`);
r = await ui.request("sessions.patch", { key: k1, label: "Probe Renamed" });
note(`patch duplicate label -> ok=${r.ok} ${JSON.stringify(r.error ?? "")}`);
r = await ui.request("sessions.patch", { key: k2, label: null });
note(`patch label null -> ok=${r.ok} ${JSON.stringify(r.error ?? rowBrief(r.payload?.entry))}`);
r = await ui.request("sessions.patch", { key: k2, label: "Probe Alpha" });
r = await ui.request("sessions.patch", { key: k2, archived: true });
note(`archive without expectedSessionId -> ${JSON.stringify(r.error ?? "ok")}`);
r = await ui.request("sessions.patch", { key: k2, archived: true, expectedSessionId: "00000000-0000-0000-0000-000000000000" });
note(`archive with wrong expectedSessionId -> ${JSON.stringify(r.error ?? "ok")}`);
const mainDesc = await ui.request("sessions.describe", { key: "agent:main:main" });
const mainSid = mainDesc.payload?.session?.sessionId;
r = await ui.request("sessions.patch", { key: "agent:main:main", archived: true, expectedSessionId: mainSid ?? "x" });
note(`archive main -> ${JSON.stringify(r.error ?? "ok")}`);
r = await ui.request("sessions.patch", { key: "main", archived: true, expectedSessionId: mainSid ?? "x" });
note(`archive "main" alias -> ${JSON.stringify(r.error ?? "ok")}`);
ui.events.length = 0;
r = await ui.request("sessions.patch", { key: k2, archived: true, expectedSessionId: sid2 });
await sleep(1000);
note(`archive ok -> ${JSON.stringify(trim(r.ok ? { ...r.payload, entry: rowBrief(r.payload.entry) } : r.error, 100))}`);
note(`events after archive: ${ui.events.filter((e) => e.event === "sessions.changed").map((e) => JSON.stringify(trim({ ...e.payload, session: rowBrief(e.payload.session) }))).join(" | ")}`);
r = await ui.request("sessions.list", { agentId: "main" });
note(`default list after archive contains k2: ${(r.payload?.sessions ?? []).some((s) => s.key === k2)}`);
r = await ui.request("sessions.list", { agentId: "main", archived: true });
note(`archived:true -> ${(r.payload?.sessions ?? []).map((s) => `${s.key}(archived=${s.archived},archivedAt=${s.archivedAt})`).join(" ")}`);
r = await ui.request("sessions.list", { agentId: "main", archived: "all" });
note(`archived:"all" -> ${r.payload?.totalCount} rows`);
r = await ui.request("sessions.list", { agentId: "main", archived: false });
note(`archived:false -> ${r.payload?.totalCount} rows`);
r = await ui.request("chat.send", { sessionKey: k2, message: "send to archived", idempotencyKey: "probe-send-archived" });
note(`chat.send to archived -> ok=${r.ok} ${JSON.stringify(r.error ?? r.payload)}`);
await sleep(3000);
r = await ui.request("sessions.patch", { key: k2, archived: true, expectedSessionId: sid2 });
note(`archive again (already archived) -> ${JSON.stringify(r.error ?? "ok")}`);
r = await ui.request("sessions.patch", { key: k2, archived: false });
note(`unarchive without expectedSessionId -> ${JSON.stringify(r.error ?? "ok")}`);
ui.events.length = 0;
r = await ui.request("sessions.patch", { key: k2, archived: false, expectedSessionId: sid2 });
await sleep(800);
note(`unarchive -> ok=${r.ok} ${JSON.stringify(trim(r.error ?? rowBrief(r.payload?.entry)))}`);
note(`events after unarchive: ${ui.events.filter((e) => e.event === "sessions.changed").map((e) => JSON.stringify(trim({ ...e.payload, session: rowBrief(e.payload.session) }))).join(" | ")}`);
r = await reader.request("sessions.patch", { key: k2, label: "x" });
note(`reader sessions.patch -> ${JSON.stringify(r.error)}`);
r = await ui.request("sessions.patch", { key: k2, verboseLevel: "on" });
note(`ui (write) admin-only patch field -> ${JSON.stringify(r.error ?? "ok")}`);
r = await ui.request("sessions.patch", { key: "agent:main:does-not-exist", label: "ghost" });
note(`patch missing session -> ok=${r.ok} ${JSON.stringify(r.error ?? rowBrief(r.payload?.entry))}`);

// ---------------------------------------------------------------------------------------------
section("7. chat.abort");
r = await ui.request("chat.abort", { sessionKey: k2 });
note(`chat.abort idle, no runId -> ${JSON.stringify(r.payload ?? r.error)}`);
r = await ui.request("chat.abort", { sessionKey: k2, runId: "no-such-run" });
note(`chat.abort idle, unknown runId -> ${JSON.stringify(r.payload ?? r.error)}`);
r = await ui.request("chat.abort", { sessionKey: "agent:main:nonexistent" });
note(`chat.abort missing session -> ${JSON.stringify(r.payload ?? r.error)}`);
r = await reader.request("chat.abort", { sessionKey: k2 });
note(`reader chat.abort -> ${JSON.stringify(r.error ?? r.payload)}`);
ui.events.length = 0;
const sendP = ui.request("chat.send", { sessionKey: k2, message: "run to abort", idempotencyKey: "probe-abort-1" });
const sent = await sendP;
const abortR = await ui.request("chat.abort", { sessionKey: k2, runId: "probe-abort-1" });
note(`chat.abort right after send (runId) -> ${JSON.stringify(abortR.payload ?? abortR.error)}`);
await sleep(4000);
note(`events around abort: ${ui.events.filter((e) => e.event === "chat" || e.event === "sessions.changed").map((e) => e.event === "chat" ? `chat:${e.payload.state}${e.payload.stopReason ? "/" + e.payload.stopReason : ""}` : `changed:${e.payload.reason}`).join(", ")}`);
ui.events.length = 0;
await ui.request("chat.send", { sessionKey: k2, message: "run to abort 2", idempotencyKey: "probe-abort-2" });
const abortR2 = await ui.request("chat.abort", { sessionKey: k2 });
note(`chat.abort right after send (no runId) -> ${JSON.stringify(abortR2.payload ?? abortR2.error)}`);
await sleep(4000);
note(`events around abort 2: ${ui.events.filter((e) => e.event === "chat" || e.event === "sessions.changed").map((e) => e.event === "chat" ? `chat:${e.payload.state}${e.payload.stopReason ? "/" + e.payload.stopReason : ""}` : `changed:${e.payload.reason}`).join(", ")}`);
r = await ui.request("sessions.abort", { key: k2 });
note(`sessions.abort idle -> ${JSON.stringify(r.payload ?? r.error)}`);
r = await ui.request("chat.send", { sessionKey: k2, message: "/stop", idempotencyKey: "probe-stop-cmd" });
await sleep(2500);
note(`chat.send "/stop" -> ${JSON.stringify(r.payload ?? r.error)}`);

// ---------------------------------------------------------------------------------------------
section("8. truncation: chat.history and chat.message.get");
const medium = "M".repeat(20000);
const big = "B".repeat(BIG_KB * 1024);
r = await admin.request("chat.inject", { sessionKey: k1, message: medium });
const injMed = r.payload?.messageId;
note(`chat.inject 20000 chars -> ${JSON.stringify(r.payload ?? r.error)}`);
r = await admin.request("chat.inject", { sessionKey: k1, message: big });
const injBig = r.payload?.messageId;
note(`chat.inject ${big.length} chars -> ${JSON.stringify(r.payload ?? r.error)}`);
r = await ui.request("chat.send", { sessionKey: k1, message: "U".repeat(20000), idempotencyKey: "probe-long-user" });
await sleep(4000);
r = await ui.request("chat.send", { sessionKey: k1, message: "V".repeat(BIG_KB * 1024), idempotencyKey: "probe-big-user" });
await sleep(4000);
const hist = await ui.request("chat.history", { sessionKey: k1, limit: 50 });
for (const m of hist.payload?.messages ?? []) {
  const text = typeof m.content === "string" ? m.content : (m.content ?? []).map((b) => b.text ?? "").join("");
  console.log(`  history row role=${m.role} textLen=${text.length} tail=${JSON.stringify(text.slice(-24))} __openclaw=${JSON.stringify(trim(m.__openclaw, 60))} topKeys=${Object.keys(m)}`);
}
const ids = (hist.payload?.messages ?? []).map((m) => m.__openclaw?.id).filter(Boolean);
for (const id of ids) {
  r = await ui.request("chat.message.get", { sessionKey: k1, messageId: id });
  const m = r.payload?.message;
  const text = m ? (typeof m.content === "string" ? m.content : (m.content ?? []).map((b) => b.text ?? "").join("")) : "";
  note(`chat.message.get ${id} -> ok=${r.ok} payload.ok=${r.payload?.ok} unavailableReason=${r.payload?.unavailableReason} role=${m?.role} textLen=${text.length} truncated=${m?.__openclaw?.truncated} err=${JSON.stringify(r.error ?? null)}`);
}
r = await ui.request("chat.message.get", { sessionKey: k1, messageId: injMed, maxChars: 100 });
note(`chat.message.get maxChars 100 -> ${JSON.stringify(trim(r.payload, 200))}`);
r = await ui.request("chat.message.get", { sessionKey: k1, messageId: "no-such-id" });
note(`chat.message.get unknown id -> ${JSON.stringify(r.payload ?? r.error)}`);
r = await ui.request("chat.message.get", { sessionKey: "agent:main:nonexistent", messageId: "x" });
note(`chat.message.get unknown session -> ${JSON.stringify(r.payload ?? r.error)}`);
r = await reader.request("chat.message.get", { sessionKey: k1, messageId: injMed });
note(`reader chat.message.get -> ok=${r.ok} payload.ok=${r.payload?.ok}`);
r = await ui.request("chat.history", { sessionKey: k1, limit: 50, maxChars: 500000 });
for (const m of r.payload?.messages ?? []) {
  const text = typeof m.content === "string" ? m.content : (m.content ?? []).map((b) => b.text ?? "").join("");
  console.log(`  history(maxChars 500000) role=${m.role} textLen=${text.length} truncated=${m.__openclaw?.truncated} reason=${m.__openclaw?.reason}`);
}
r = await ui.request("chat.inject", { sessionKey: k1, message: "ui inject" });
note(`ui (no admin) chat.inject -> ${JSON.stringify(r.error ?? r.payload)}`);

// ---------------------------------------------------------------------------------------------
section("9. sessions.delete");
ui.events.length = 0;
r = await ui.request("sessions.delete", { key: kLit });
note(`ui (write) delete without archivedOnly -> ${JSON.stringify(r.error ?? r.payload)}`);
r = await ui.request("sessions.delete", { key: kLit, archivedOnly: true });
note(`ui delete archivedOnly on active session -> ${JSON.stringify(r.error ?? r.payload)}`);
const litDesc = await ui.request("sessions.describe", { key: kLit });
const litSid = litDesc.payload?.session?.sessionId;
await ui.request("sessions.patch", { key: kLit, archived: true, expectedSessionId: litSid });
await sleep(500);
ui.events.length = 0;
r = await ui.request("sessions.delete", { key: kLit, archivedOnly: true, expectedSessionId: litSid });
await sleep(1500);
note(`ui delete archivedOnly on archived -> ${JSON.stringify(r.error ?? r.payload)}`);
note(`events after delete: ${ui.events.filter((e) => e.event === "sessions.changed").map((e) => JSON.stringify(trim({ ...e.payload, session: rowBrief(e.payload.session) }))).join(" | ")}`);
ui.events.length = 0;
r = await admin.request("sessions.delete", { key: kEmpty });
await sleep(1500);
note(`admin delete active session -> ${JSON.stringify(r.error ?? r.payload)}`);
note(`events after admin delete: ${ui.events.filter((e) => e.event === "sessions.changed").map((e) => JSON.stringify(trim({ ...e.payload, session: rowBrief(e.payload.session) }))).join(" | ")}`);
r = await admin.request("sessions.delete", { key: "agent:main:main" });
note(`admin delete main -> ${JSON.stringify(r.error ?? r.payload)}`);
r = await admin.request("sessions.delete", { key: "agent:main:never-existed" });
note(`admin delete missing -> ${JSON.stringify(r.error ?? r.payload)}`);

} // PHASE all

// ---------------------------------------------------------------------------------------------
section("10. extras: incumbent /new params, slash commands through chat.send, derived titles");
await ui.request("sessions.subscribe", {});
// What the incumbent's /new (createChatSession) sends: agentId + parentSessionKey + emitCommandHooks + succeedsParent:false
r = await ui.request("sessions.create", { agentId: "main", parentSessionKey: "agent:main:main", emitCommandHooks: true, succeedsParent: false });
note(`incumbent-style /new create -> ${JSON.stringify(trim({ ...r.payload, entry: r.payload?.entry ? rowBrief(r.payload.entry) : undefined }) ?? r.error)}`);
const kNew = r.payload?.key;
r = await ui.request("sessions.create", { agentId: "main", message: "first message via create", idempotencyKey: "probe-create-msg" });
note(`create with message -> ${JSON.stringify(trim({ ...r.payload, entry: undefined }) ?? r.error)}`);
await sleep(4000);
r = await ui.request("chat.send", { sessionKey: kNew, message: "Please summarize the quarterly zebra report", idempotencyKey: "probe-title-1" });
await sleep(6000);
r = await ui.request("sessions.list", { agentId: "main", includeDerivedTitles: true, includeLastMessage: true, search: kNew.split(":").pop() });
note(`unlabeled session after first message: ${JSON.stringify((r.payload?.sessions ?? []).map(rowBrief))}`);
r = await ui.request("sessions.list", { agentId: "main", search: "quarterly" });
note(`search message text "quarterly" -> ${(r.payload?.sessions ?? []).map((s) => s.key).join(" ") || "(none)"}`);
const before = (await ui.request("sessions.describe", { key: kNew })).payload?.session?.sessionId;
ui.events.length = 0;
r = await ui.request("chat.send", { sessionKey: kNew, message: "/new", idempotencyKey: "probe-slash-new" });
await sleep(3000);
const after = (await ui.request("sessions.describe", { key: kNew })).payload?.session?.sessionId;
note(`chat.send "/new" -> ${JSON.stringify(r.payload ?? r.error)}; sessionId ${before} -> ${after}; events: ${ui.events.filter((e) => e.event === "sessions.changed").map((e) => e.payload.reason ?? `phase:${e.payload.phase}`).join(",")}`);
r = await ui.request("chat.history", { sessionKey: kNew, limit: 20 });
note(`history after "/new": ${JSON.stringify((r.payload?.messages ?? []).map((m) => ({ role: m.role, text: trim(typeof m.content === "string" ? m.content : (m.content ?? []).map((b) => b.text ?? "").join(""), 60) })))}`);
ui.events.length = 0;
await ui.request("chat.send", { sessionKey: kNew, message: "start a run", idempotencyKey: "probe-run-then-stop" });
r = await ui.request("chat.send", { sessionKey: kNew, message: "/stop", idempotencyKey: "probe-slash-stop" });
note(`chat.send "/stop" during a run -> ${JSON.stringify(r.payload ?? r.error)}`);
await sleep(3000);
note(`events: ${ui.events.filter((e) => e.event === "chat").map((e) => `chat:${e.payload.runId}:${e.payload.state}${e.payload.stopReason ? "/" + e.payload.stopReason : ""}`).join(", ")}`);
r = await ui.request("chat.send", { sessionKey: kNew, message: "stop", idempotencyKey: "probe-plain-stop" });
note(`chat.send "stop" (idle) -> ${JSON.stringify(r.payload ?? r.error)}`);
await sleep(1500);
r = await ui.request("chat.history", { sessionKey: kNew, limit: 30 });
note(`history after stop commands: ${JSON.stringify((r.payload?.messages ?? []).map((m) => ({ role: m.role, text: trim(typeof m.content === "string" ? m.content : (m.content ?? []).map((b) => b.text ?? "").join(""), 50) })))}`);
// sessions.list with search and paging counts
r = await ui.request("sessions.list", { agentId: "main", search: "dashboard", limit: 1 });
note(`search "dashboard" limit 1 -> count=${r.payload?.count} totalCount=${r.payload?.totalCount} hasMore=${r.payload?.hasMore} nextOffset=${r.payload?.nextOffset}`);

section("SUMMARY");
for (const s of summary) console.log(`- ${s}`);
admin.close(); ui.close(); reader.close();
await sleep(200);
process.exit(0);
