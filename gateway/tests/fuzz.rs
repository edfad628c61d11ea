//! A property harness over the connection's frame handler and every method's params: arbitrary
//! bytes, arbitrary JSON, and structurally valid frames of every method (and of `connect`)
//! with mutated params, fed to `conn::on_text` / `conn::run_request` in-process. Properties:
//! no panic; every request handed to a method gets exactly one response with its id; a frame
//! that stops the connection queues a close; nothing hangs (a wall-clock watchdog for CPU
//! hangs, and a bound in the runtime's own time for waits: only `question.waitAnswer` and the
//! approval requests and waits may wait that long, because they wait for a person).
//!
//! `FUZZ_CASES` sets the number of cases, `FUZZ_SEED` the seed. `make test` runs the default
//! 250,000 cases of the fixed seed (about a quarter of a minute of both cores); `make fuzz` runs a
//! million, and takes any seed (`make fuzz FUZZ_SEED=…`): the cases of a seed are the same on
//! every machine, so a failing seed and case count reproduce it.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use gateway::conn::{ConnState, Headers, Step, on_text, run_request};
use gateway::hub::{ConnSender, Outbound};
use gateway::{Config, Gateway};
use protocol::device::DeviceIdentity;
use serde_json::{Map, Value, json};

const TOKEN: &str = "fuzz-f7ee8af88b0f8be343f73cd69f052935";
/// What the cases reached: requests handed to a method, of which answered ok, and connects let in.
static DISPATCHED: AtomicU64 = AtomicU64::new(0);
static OK: AtomicU64 = AtomicU64::new(0);
static ADMITTED: AtomicU64 = AtomicU64::new(0);

/// Cases in `make test`; `make fuzz` runs a million.
const DEFAULT_CASES: u64 = 250_000;

/// Cases per gateway (a fresh in-memory gateway and runtime after that many).
const BATCH: u64 = 10_000;

/// xorshift64*: small, fast, reproducible from the printed seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const KEYS: &[&str] = &[
    "id",
    "questions",
    "questionId",
    "header",
    "question",
    "options",
    "label",
    "description",
    "multiSelect",
    "isOther",
    "isSecret",
    "secretStore",
    "name",
    "kind",
    "timeoutMs",
    "sessionKey",
    "agentId",
    "runId",
    "answers",
    "cancel",
    "resolvedBy",
    "resolutionId",
    "includeResolutionId",
    "command",
    "commandArgv",
    "twoPhase",
    "decision",
    "allowedDecisions",
    "unavailableDecisions",
    "cursor",
    "requireDeliveryRoute",
    "title",
    "severity",
    "message",
    "idempotencyKey",
    "queueMode",
    "replyToId",
    "deliver",
    "thinking",
    "limit",
    "offset",
    "maxChars",
    "key",
    "archived",
    "expectedSessionId",
    "messageId",
    "search",
    "includeGlobal",
    "includeApprovals",
    "preserveSideRuns",
    "minProtocol",
    "maxProtocol",
    "client",
    "version",
    "platform",
    "mode",
    "scopes",
    "device",
    "auth",
    "token",
    "deviceToken",
    "signature",
    "publicKey",
    "signedAt",
    "nonce",
    "role",
    "caps",
    "type",
    "method",
    "params",
    "__proto__",
    "constructor",
    "",
    "zz",
];

const METHODS: &[&str] = &[
    "health",
    "sessions.list",
    "sessions.create",
    "sessions.patch",
    "sessions.describe",
    "sessions.subscribe",
    "sessions.messages.subscribe",
    "sessions.messages.unsubscribe",
    "chat.send",
    "chat.history",
    "chat.message.get",
    "chat.abort",
    "question.request",
    "question.list",
    "question.get",
    "question.resolve",
    "question.waitAnswer",
    "exec.approval.request",
    "exec.approval.list",
    "exec.approval.get",
    "exec.approval.resolve",
    "exec.approval.waitDecision",
    "plugin.approval.request",
    "plugin.approval.list",
    "plugin.approval.resolve",
    "plugin.approval.waitDecision",
    "openclaw.approval.list",
    "approval.get",
    "approval.resolve",
    "approval.history",
    "connect",
    "chat.inject",
    "no.such",
    "",
];

fn weird_string(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => String::new(),
        1 => "x".repeat(rng.below(2000)),
        2 => "\u{0}\u{1}\u{7f}".into(),
        3 => "é漢字🙂\u{202e}".into(),
        4 => "main".into(),
        5 => "agent:main:main".into(),
        6 => " ".repeat(rng.below(10)),
        7 => "Staging (Recommended)".into(),
        8 => "operator.admin".into(),
        9 => format!("{}", rng.next()),
        10 => "\\\"'<script>".into(),
        _ => (0..rng.below(20)).map(|_| char::from(b'a' + rng.below(26) as u8)).collect(),
    }
}

fn random_json(rng: &mut Rng, depth: usize) -> Value {
    let top = if depth == 0 { 6 } else { 9 };
    match rng.below(top) {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(50)),
        2 => json!(*rng.pick(&[0i64, -1, 1, i64::MIN, i64::MAX, 42, 30_000, 2_000_000_000_000])),
        3 => json!(*rng.pick(&[0.5f64, -0.0, 1e308, -1e-300, 3.0])),
        4 => json!(u64::MAX),
        5 => Value::String(weird_string(rng)),
        6 => Value::Array((0..rng.below(5)).map(|_| random_json(rng, depth - 1)).collect()),
        _ => {
            let mut m = Map::new();
            for _ in 0..rng.below(5) {
                m.insert(rng.pick(KEYS).to_string(), random_json(rng, depth - 1));
            }
            Value::Object(m)
        }
    }
}

/// Changes `v` somewhere: replaces a node, removes or adds a field, or changes a type.
fn mutate(rng: &mut Rng, v: &mut Value, depth: usize) {
    let descend = depth < 6 && rng.chance(60);
    match v {
        Value::Object(m) if descend && !m.is_empty() => {
            let k = m.keys().nth(rng.below(m.len())).unwrap().clone();
            mutate(rng, m.get_mut(&k).unwrap(), depth + 1);
        }
        Value::Array(a) if descend && !a.is_empty() => {
            let i = rng.below(a.len());
            mutate(rng, &mut a[i], depth + 1);
        }
        Value::Object(m) => match rng.below(4) {
            0 if !m.is_empty() => {
                let k = m.keys().nth(rng.below(m.len())).unwrap().clone();
                m.remove(&k);
            }
            1 => {
                m.insert(rng.pick(KEYS).to_string(), random_json(rng, 1));
            }
            2 => {
                m.insert(weird_string(rng), random_json(rng, 1));
            }
            _ => *v = random_json(rng, 2),
        },
        Value::Array(a) => match rng.below(3) {
            0 => a.push(random_json(rng, 1)),
            1 if !a.is_empty() => {
                let x = a[0].clone();
                a.push(x);
            }
            _ => *v = random_json(rng, 2),
        },
        _ => *v = random_json(rng, 2),
    }
}

/// What the valid form of each method's params looks like (mutations start from these).
fn base_params(rng: &mut Rng, method: &str, ids: &[String]) -> Value {
    let id = if ids.is_empty() || rng.chance(20) { "nope".to_string() } else { rng.pick(ids).clone() };
    let session = *rng.pick(&["main", "fuzz-a", "fuzz-b", "agent:main:fuzz-c"]);
    match method {
        "sessions.list" => json!({"limit": 10, "includeGlobal": true}),
        "sessions.create" => json!({"key": session, "label": "L"}),
        "sessions.patch" => {
            if rng.chance(50) {
                json!({"key": session, "label": *rng.pick(&["L", "M"])})
            } else {
                json!({"key": session, "archived": rng.chance(70), "expectedSessionId": id})
            }
        }
        "sessions.describe" => json!({"key": session}),
        "chat.message.get" => json!({"sessionKey": session, "messageId": id, "maxChars": *rng.pick(&[1u64, 100, 500_000])}),
        "sessions.messages.subscribe" | "sessions.messages.unsubscribe" => json!({"key": session}),
        "chat.send" => {
            json!({"sessionKey": session, "message": *rng.pick(&["hello", "deploy", "color", "fail", "async", "help", "run it"]), "idempotencyKey": format!("f-{}", rng.below(50))})
        }
        "chat.history" => json!({"sessionKey": session, "limit": 5}),
        "chat.abort" => json!({"sessionKey": session}),
        "question.request" => {
            json!({"id": format!("fq-{}", rng.below(1000)), "sessionKey": session, "timeoutMs": *rng.pick(&[10u64, 1000, 600_000]), "questions": [
            {"questionId": "a", "header": "H", "question": "Q?", "options": [{"label": "Red"}, {"label": "Blue"}], "multiSelect": rng.chance(50), "isOther": rng.chance(50)},
            {"questionId": "b", "header": "H2", "question": "Q2?", "options": []}]})
        }
        "question.get" => json!({"id": id}),
        "question.resolve" => {
            if rng.chance(30) {
                json!({"id": id, "cancel": true})
            } else {
                json!({"id": id, "answers": {"answers": {"a": ["Red"], "b": ["free text"]}}, "resolvedBy": "fuzz"})
            }
        }
        "question.waitAnswer" => json!({"id": id, "timeoutMs": *rng.pick(&[0u64, 5, 1000]), "includeResolutionId": true}),
        "exec.approval.request" => {
            json!({"command": *rng.pick(&["ls -la", "sh -c 'x; y' | z && w", ""]), "sessionKey": session, "timeoutMs": *rng.pick(&[1u64, 1000, 1_800_000]),
            "twoPhase": rng.chance(50), "ask": *rng.pick(&["on-miss", "always"]), "requireDeliveryRoute": rng.chance(80)})
        }
        "plugin.approval.request" => {
            json!({"title": "T", "description": "D", "allowedDecisions": ["allow-once"], "timeoutMs": *rng.pick(&[1u64, 1000, 600_000]), "twoPhase": rng.chance(50)})
        }
        "exec.approval.get" | "approval.get" | "exec.approval.waitDecision" | "plugin.approval.waitDecision" => json!({"id": id}),
        "exec.approval.resolve" | "plugin.approval.resolve" => {
            json!({"id": id, "decision": *rng.pick(&["allow-once", "allow-always", "deny", "approve"])})
        }
        "approval.resolve" => {
            json!({"id": id, "kind": *rng.pick(&["exec", "plugin", "system-agent"]), "decision": *rng.pick(&["allow-once", "allow-always", "deny"])})
        }
        "approval.history" => json!({"limit": *rng.pick(&[1u64, 50, 100]), "kind": *rng.pick(&["exec", "plugin"])}),
        "connect" => connect_params(&[protocol::methods::scope::ADMIN]),
        _ => json!({}),
    }
}

fn connect_params(scopes: &[&str]) -> Value {
    json!({"minProtocol": 4, "maxProtocol": 4, "client": {"id": "gateway-client", "version": "1", "platform": "linux", "mode": "backend"},
        "role": "operator", "scopes": scopes, "auth": {"token": TOKEN}})
}

/// A connection under test and the queue its frames go to.
struct Conn {
    st: ConnState,
    rx: tokio::sync::mpsc::UnboundedReceiver<Outbound>,
}

impl Conn {
    fn fresh(origin: Option<&str>) -> Conn {
        let (sender, rx) = ConnSender::new();
        let st = ConnState {
            conn_id: gateway::util::uuid_v4(),
            nonce: gateway::util::uuid_v4(),
            headers: Headers { origin: origin.map(str::to_string), host: Some("127.0.0.1:1".into()), remote: None },
            peer: None,
            sender,
        };
        Conn { st, rx }
    }

    /// Takes everything queued, as the socket writer would; the texts of the responses.
    fn drain(&mut self) -> (Vec<String>, bool) {
        let (mut texts, mut closed) = (Vec::new(), false);
        while let Ok(out) = self.rx.try_recv() {
            match out {
                Outbound::Text(t) => {
                    self.st.sender.sent(t.len());
                    texts.push(t);
                }
                Outbound::Event { event, payload } => self.st.sender.sent(event.len() + payload.len() + 48),
                Outbound::Close(..) => closed = true,
                Outbound::Hold(_) => {}
            }
        }
        (texts, closed)
    }
}

/// Feeds one frame; checks the properties; returns the responses' payloads.
async fn feed(gw: &Arc<Gateway>, conn: &mut Conn, text: &str, case: u64) -> Vec<Value> {
    let step = std::panic::catch_unwind(AssertUnwindSafe(|| on_text(gw, &mut conn.st, text)))
        .unwrap_or_else(|_| panic!("case {case}: on_text panicked on {}", preview(text)));
    match step {
        Step::Continue => {}
        Step::Stop => {
            let (_, closed) = conn.drain();
            assert!(closed, "case {case}: the connection stopped without a close: {}", preview(text));
            return Vec::new();
        }
        Step::Dispatch(peer, frame, work) => {
            let (id, method) = (frame.id.clone(), frame.method.clone());
            // These wait for a person (or the approval's expiry, which may be far away).
            let waits =
                method == "question.waitAnswer" || method.ends_with(".approval.request") || method.ends_with(".approval.waitDecision");
            let task = tokio::spawn(run_request(gw.clone(), peer, frame, work));
            // Runtime time (paused: it jumps ahead when everything waits).
            let finished = match tokio::time::timeout(Duration::from_secs(3600), task).await {
                Ok(Ok(())) => true,
                Ok(Err(e)) => panic!("case {case}: `{method}` panicked ({e}) on {}", preview(text)),
                Err(_) => {
                    assert!(waits, "case {case}: `{method}` did not return within an hour of runtime time: {}", preview(text));
                    false
                }
            };
            let (texts, _) = conn.drain();
            if method != "question.waitAnswer" && finished {
                // A response (keys are serialised in order, so `type` is last) carrying our id.
                let id_field = format!(r#""id":{}"#, serde_json::to_string(&id).unwrap());
                let answered = texts.iter().filter(|t| t.ends_with(r#""type":"res"}"#) && t.contains(&id_field)).count();
                // A two-phase approval request answers twice: accepted, then the outcome.
                let two_phase = method.ends_with(".approval.request")
                    && texts.iter().any(|t| t.contains(&id_field) && t.contains(r#""status":"accepted""#));
                assert_eq!(answered, if two_phase { 2 } else { 1 }, "case {case}: `{method}` got {answered} responses: {}", preview(text));
            }
            DISPATCHED.fetch_add(1, Ordering::Relaxed);
            if texts.iter().any(|t| t.contains(r#""ok":true"#) && t.contains(&format!(r#""id":{}"#, serde_json::to_string(&id).unwrap()))) {
                OK.fetch_add(1, Ordering::Relaxed);
            }
            // Remember the questions and sessions made, so later cases can get, resolve, wait on
            // and archive them.
            return texts
                .iter()
                .filter(|t| {
                    t.contains(r#""payload":{"expiresAtMs""#)
                        || t.contains(r#""payload":{"id":"fq-"#)
                        || t.contains(r#""deliveryRoute""#)
                        || t.contains(r#""runStarted""#)
                })
                .filter_map(|t| serde_json::from_str::<Value>(t).ok())
                .filter_map(|v| v.get("payload").cloned())
                .collect();
        }
    }
    conn.drain();
    Vec::new()
}

fn preview(text: &str) -> String {
    protocol::frame::truncate(text, 300)
}

/// Connects `conn` with valid params (a backend with `scopes`, or a signed device).
async fn connect(gw: &Arc<Gateway>, conn: &mut Conn, params: Value) {
    let frame = json!({"type": "req", "id": "c", "method": "connect", "params": params}).to_string();
    feed(gw, conn, &frame, 0).await;
    assert!(conn.st.peer.is_some(), "the harness's own connect works");
}

fn device_params(nonce: &str, seed: u8) -> Value {
    let challenge = protocol::connect::ConnectChallenge { nonce: nonce.into(), ts: gateway::util::now_ms(), capabilities: vec![] };
    let mut info = protocol::connect::ClientInfo::new(protocol::connect::CONTROL_UI_CLIENT_ID, "1", "linux", "webchat");
    info.build_id = Some("dev".into());
    let scopes = protocol::methods::UI_SCOPES.iter().map(|s| s.to_string()).collect();
    let auth = protocol::connect::AuthParams { token: Some(TOKEN.into()), ..Default::default() };
    serde_json::to_value(protocol::connect::ConnectParams::operator(
        info,
        scopes,
        auth,
        Some(&DeviceIdentity::from_seed([seed; 32])),
        &challenge,
    ))
    .unwrap()
}

/// One batch: a fresh gateway over in-memory SQLite on a paused-clock runtime.
fn batch(seed: u64, first_case: u64, cases: u64, progress: &AtomicU64) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap();
    rt.block_on(async {
        let dir = std::env::temp_dir();
        let mut cfg = Config::local(TOKEN, dir.clone(), dir);
        // As if listening on 127.0.0.1:1, the Host the connections say they reached.
        cfg.port = 1;
        let gw = Gateway::new(cfg, gateway::store::Store::in_memory());
        let mut rng = Rng(seed ^ first_case.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut admin = Conn::fresh(None);
        connect(&gw, &mut admin, connect_params(&[protocol::methods::scope::ADMIN])).await;
        let mut guest = Conn::fresh(None);
        connect(&gw, &mut guest, connect_params(&[protocol::methods::scope::SESSIONS_WRITE])).await;
        let mut nobody = Conn::fresh(None);
        connect(&gw, &mut nobody, connect_params(&[])).await;
        let mut ui = Conn::fresh(Some("http://127.0.0.1:1"));
        let nonce = ui.st.nonce.clone();
        connect(&gw, &mut ui, device_params(&nonce, (first_case % 251) as u8)).await;
        // Signed once per batch over a fixed nonce; the pre-connect cases reuse it.
        let batch_nonce = gateway::util::uuid_v4();
        let signed = device_params(&batch_nonce, 3);
        let mut ids: Vec<String> = Vec::new();
        for case in first_case..first_case + cases {
            let kind = rng.below(100);
            let conn = match rng.below(10) {
                0..=5 => &mut admin,
                6 => &mut guest,
                7 => &mut nobody,
                _ => &mut ui,
            };
            let text = if kind < 8 {
                // Arbitrary bytes, as text.
                let bytes: Vec<u8> = (0..rng.below(300)).map(|_| rng.next() as u8).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            } else if kind < 18 {
                random_json(&mut rng, 3).to_string()
            } else if kind < 28 {
                // Pre-connect: mutated connect frames (and anything else) on a new socket.
                let mut fresh = Conn::fresh(if rng.chance(50) { Some("http://127.0.0.1:1") } else { None });
                let mut params = if rng.chance(30) {
                    fresh.st.nonce = batch_nonce.clone();
                    signed.clone()
                } else {
                    connect_params(&[protocol::methods::scope::ADMIN])
                };
                for _ in 0..1 + rng.below(3) {
                    mutate(&mut rng, &mut params, 0);
                }
                let mut frame = json!({"type": "req", "id": "c", "method": "connect", "params": params});
                if rng.chance(15) {
                    mutate(&mut rng, &mut frame, 0);
                }
                feed(&gw, &mut fresh, &frame.to_string(), case).await;
                if fresh.st.peer.is_some() {
                    ADMITTED.fetch_add(1, Ordering::Relaxed);
                    gw.hub.leave(&fresh.st.conn_id.clone());
                }
                progress.fetch_add(1, Ordering::Relaxed);
                continue;
            } else {
                // A request frame of some method, with params mutated (or, rarely, valid).
                let method = *rng.pick(METHODS);
                let mut params = base_params(&mut rng, method, &ids);
                let mutations = if rng.chance(15) { 0 } else { 1 + rng.below(3) };
                for _ in 0..mutations {
                    mutate(&mut rng, &mut params, 0);
                }
                let mut frame = json!({"type": "req", "id": format!("r{case}"), "method": method, "params": params});
                if rng.chance(10) {
                    mutate(&mut rng, &mut frame, 0);
                }
                frame.to_string()
            };
            for payload in feed(&gw, conn, &text, case).await {
                // Question and approval ids, and the sessionIds that archive names.
                if let Some(id) = payload.get("id").or_else(|| payload.get("sessionId")).and_then(Value::as_str)
                    && ids.len() < 64
                {
                    ids.push(id.to_string());
                }
            }
            progress.fetch_add(1, Ordering::Relaxed);
        }
    });
}

#[test]
fn hostile_frames_never_panic_hang_or_go_unanswered() {
    let total: u64 = std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_CASES);
    let seed: u64 = std::env::var("FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x0C0F_FEE5);
    let threads: u64 = 2;
    gateway::log::set_quiet(true);
    let progress = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let per_thread = total.div_ceil(threads);
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let (progress, failed) = (progress.clone(), failed.clone());
            std::thread::spawn(move || {
                let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    let mut done = 0;
                    while done < per_thread {
                        let n = BATCH.min(per_thread - done);
                        batch(seed, t * per_thread + done, n, &progress);
                        done += n;
                    }
                }));
                if result.is_err() {
                    failed.store(true, Ordering::SeqCst);
                }
                result
            })
        })
        .collect();
    // Watchdog: progress must not stall for 30 s (a CPU hang or a deadlock).
    let mut last = (0, Instant::now());
    while !workers.iter().all(|w| w.is_finished()) {
        std::thread::sleep(Duration::from_millis(200));
        let now = progress.load(Ordering::Relaxed);
        if now != last.0 {
            last = (now, Instant::now());
        }
        assert!(
            failed.load(Ordering::SeqCst) || last.1.elapsed() < Duration::from_secs(30),
            "no progress for 30 s after {now} cases: a hang"
        );
    }
    for w in workers {
        if let Err(panic) = w.join().unwrap() {
            std::panic::resume_unwind(panic);
        }
    }
    let ran = progress.load(Ordering::Relaxed);
    let secs = started.elapsed().as_secs_f64();
    let (dispatched, ok, admitted) = (DISPATCHED.load(Ordering::Relaxed), OK.load(Ordering::Relaxed), ADMITTED.load(Ordering::Relaxed));
    println!(
        "fuzz: {ran} cases (seed {seed:#x}) in {secs:.1} s, {:.0} cases/s: {dispatched} requests reached a method ({ok} answered ok), {admitted} mutated connects let in; no panic, no hang, every request answered once",
        ran as f64 / secs
    );
    // The mutations are not all rejected at the door: methods run, and some succeed.
    assert!(dispatched > ran / 4 && ok > ran / 50, "the cases barely reach the methods: {dispatched} dispatched, {ok} ok");
    assert!(ran >= total, "ran {ran} of {total} cases");
}
