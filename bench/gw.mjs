// A minimal protocol-v4 gateway client for the benchmarks (Node >= 22: global WebSocket).
// The same code drives our local gateway and the real OpenClaw gateway: a trusted loopback
// backend client (shared token, no device identity), as the real gateway's own tools connect.
export function connect(url, token, { name = "bench", scopes = ["operator.admin", "operator.read", "operator.write", "operator.questions"] } = {}) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const pending = new Map();
    const listeners = new Set();
    let seq = 0;
    let ready = false;
    const conn = {
      name,
      hello: null,
      request(method, params) {
        const id = `${name}-${++seq}`;
        ws.send(JSON.stringify({ type: "req", id, method, params }));
        return new Promise((res) => pending.set(id, res));
      },
      /** Resolves with the first event for which `pred` holds (checked from now on). */
      waitEvent(pred, ms = 30000) {
        return new Promise((res, rej) => {
          const timer = setTimeout(() => { listeners.delete(fn); rej(new Error(`${name}: no matching event in ${ms} ms`)); }, ms);
          const fn = (f) => { if (pred(f)) { clearTimeout(timer); listeners.delete(fn); res(f); } };
          listeners.add(fn);
        });
      },
      onEvent(fn) { listeners.add(fn); return () => listeners.delete(fn); },
      close() { try { ws.close(); } catch {} },
    };
    ws.onerror = (e) => { if (!ready) reject(new Error(`${name}: ${e.message ?? "websocket error"}`)); };
    ws.onclose = (e) => { if (!ready) reject(new Error(`${name}: closed ${e.code} ${e.reason}`)); };
    ws.onmessage = async (ev) => {
      const frame = JSON.parse(String(ev.data));
      if (frame.type === "event" && frame.event === "connect.challenge") {
        const res = await conn.request("connect", {
          minProtocol: 4, maxProtocol: 4,
          client: { id: "gateway-client", version: "bench", platform: "linux", mode: "backend" },
          role: "operator", scopes, caps: [], auth: { token }, locale: "en-US", userAgent: "ocui-bench",
        });
        if (res.ok) { ready = true; conn.hello = res.payload; resolve(conn); }
        else reject(new Error(`${name}: connect refused: ${JSON.stringify(res.error)}`));
        return;
      }
      if (frame.type === "res" && pending.has(frame.id)) { pending.get(frame.id)(frame); pending.delete(frame.id); }
      if (frame.type === "event") for (const fn of [...listeners]) fn(frame);
    };
  });
}

/** Connects, retrying while the gateway is still starting. */
export async function connectRetry(url, token, opts = {}, deadlineMs = Date.now() + 90000) {
  for (;;) {
    try { return await connect(url, token, opts); }
    catch (e) {
      if (Date.now() > deadlineMs) throw e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** One single-select question with `n` options; `title` makes it findable on the page. */
export function questionParams(title, { timeoutMs = 10 * 60 * 1000, sessionKey } = {}) {
  return {
    questions: [{ questionId: "q1", header: "Bench", question: title, options: [{ label: "Alpha" }, { label: "Beta" }, { label: "Gamma" }], isOther: true }],
    timeoutMs,
    ...(sessionKey ? { sessionKey } : {}),
  };
}

export async function raiseQuestion(conn, title, opts) {
  const r = await conn.request("question.request", questionParams(title, opts));
  if (!r.ok) throw new Error(`question.request refused: ${JSON.stringify(r.error)}`);
  return r.payload.id;
}

export async function resolveQuestion(conn, id) {
  const r = await conn.request("question.resolve", { id, answers: { answers: { q1: ["Alpha"] } } });
  if (!r.ok) throw new Error(`question.resolve refused: ${JSON.stringify(r.error)}`);
}

/** `config.patch` on the gateway's current config, applied without a restart. */
export async function configPatch(conn, patch) {
  const cur = await conn.request("config.get", {});
  if (!cur.ok) throw new Error(`config.get refused: ${JSON.stringify(cur.error)}`);
  const r = await conn.request("config.patch", { raw: JSON.stringify(patch), baseHash: cur.payload.hash });
  if (!r.ok) throw new Error(`config.patch refused: ${JSON.stringify(r.error)}`);
}
