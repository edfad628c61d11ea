//! A bounded loopback load generator: N signed Control UI devices raise questions with
//! `question.request`, answer them with `question.resolve` and send chat messages for T
//! seconds, then wait for the work to settle, count every event each client should have
//! received (lost and duplicated), and report throughput, request latency and the gateway's
//! peak memory. It starts the real gateway binary as a child (or targets a running one), and
//! it always stops by itself: the run, the drain and the shutdown each have a deadline.
//!
//! Every client sees every other client's questions and sessions (the UI's scopes are
//! broad), so each event is fanned out to all N connections: the expected events are known
//! exactly from the acknowledged requests.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use protocol::device::DeviceIdentity;
use protocol::frame::{EventFrame, Frame, RequestFrame};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;

use crate::client::{Client, ClientOptions, Handshake};

#[derive(Debug, Clone)]
pub struct LoadOptions {
    pub clients: usize,
    pub run_for: Duration,
    /// Pause between one client's iterations (0: as fast as responses come back).
    pub think: Duration,
    /// Start this gateway binary as a child on a free loopback port (with a fresh data dir).
    pub gateway_bin: Option<PathBuf>,
    /// Or target a gateway that is already running.
    pub url: Option<String>,
    pub token: String,
    /// How long to wait after the run for outstanding runs and events.
    pub drain_for: Duration,
    pub tick_ms: u64,
    /// Let `url` name a gateway beyond loopback (`--allow-remote`): a load generator pointed
    /// at someone else's machine is an attack tool.
    pub allow_remote: bool,
}

/// The most clients one run may start.
pub const MAX_CLIENTS: usize = 1000;

/// The host of a `ws://HOST:PORT[/path]` URL (`[::1]` without its brackets).
fn target_host(url: &str) -> Option<&str> {
    let authority = url.strip_prefix("ws://")?.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let host = match authority.strip_prefix('[') {
        Some(rest) => rest.split_once(']')?.0,
        None => authority.split(':').next()?,
    };
    (!host.is_empty()).then_some(host)
}

/// Whether a `ws://` URL names this machine by a loopback address or `localhost`.
pub fn is_loopback_url(url: &str) -> bool {
    target_host(url).is_some_and(|h| h.eq_ignore_ascii_case("localhost") || h.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback()))
}

impl LoadOptions {
    /// Refuses what the load generator must not do: no clients or more than [`MAX_CLIENTS`],
    /// no time, and a target beyond loopback without `allow_remote`.
    pub fn check(&self) -> Result<(), String> {
        if self.clients == 0 || self.clients > MAX_CLIENTS {
            return Err(format!("--clients must be 1 to {MAX_CLIENTS}, not {}", self.clients));
        }
        if self.run_for.is_zero() {
            return Err("--seconds must be at least 1".into());
        }
        if let Some(url) = &self.url {
            if target_host(url).is_none() {
                return Err(format!("--url must be ws://HOST:PORT, not `{}`", crate::util::truncate_for_log(url)));
            }
            if !self.allow_remote && !is_loopback_url(url) {
                return Err(format!(
                    "refusing to load {}: it is not a loopback address. Pass --allow-remote to load a gateway on another machine (yours, or one you may test).",
                    crate::util::truncate_for_log(url)
                ));
            }
        }
        Ok(())
    }
}

/// `loadgen`'s arguments (after the program name) into options and the report's path;
/// `Ok(None)` for `--help`. `token` is TOKEN or TOKEN_FILE's (see `config::token_from_env`),
/// needed with `--url`.
pub fn parse_args(args: &[String], token: Option<String>) -> Result<Option<(LoadOptions, Option<PathBuf>)>, String> {
    let mut opts = LoadOptions::default();
    let mut out = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = |name: &str| it.next().cloned().ok_or_else(|| format!("{name} needs a value"));
        let num = |name: &str, v: String| v.parse::<u64>().map_err(|_| format!("{name} must be a number"));
        match a.as_str() {
            "--clients" => opts.clients = usize::try_from(num("--clients", val("--clients")?)?).unwrap_or(usize::MAX),
            "--seconds" => opts.run_for = Duration::from_secs(num("--seconds", val("--seconds")?)?),
            "--think-ms" => opts.think = Duration::from_millis(num("--think-ms", val("--think-ms")?)?),
            "--drain-seconds" => opts.drain_for = Duration::from_secs(num("--drain-seconds", val("--drain-seconds")?)?),
            "--gateway" => opts.gateway_bin = Some(PathBuf::from(val("--gateway")?)),
            "--url" => opts.url = Some(val("--url")?),
            "--allow-remote" => opts.allow_remote = true,
            "--token" => return Err(crate::config::TOKEN_FLAG_REFUSED.into()),
            "--out" => out = Some(PathBuf::from(val("--out")?)),
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument `{}`", crate::util::truncate_for_log(other))),
        }
    }
    if opts.url.is_some() {
        opts.token = token.ok_or("--url needs the running gateway's token: TOKEN=… or TOKEN_FILE=path")?;
    }
    opts.check()?;
    Ok(Some((opts, out)))
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            clients: 200,
            run_for: Duration::from_secs(60),
            think: Duration::ZERO,
            gateway_bin: None,
            url: None,
            token: crate::util::random_token(),
            drain_for: Duration::from_secs(60),
            tick_ms: 5_000,
            allow_remote: false,
        }
    }
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Default)]
pub struct Percentiles {
    pub count: usize,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl Percentiles {
    fn of(mut micros: Vec<u64>) -> Percentiles {
        if micros.is_empty() {
            return Percentiles::default();
        }
        micros.sort_unstable();
        let at = |q: f64| micros[((micros.len() as f64 * q).ceil() as usize).clamp(1, micros.len()) - 1] as f64 / 1000.0;
        Percentiles { count: micros.len(), p50: at(0.50), p99: at(0.99), max: *micros.last().unwrap() as f64 / 1000.0 }
    }
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct LoadReport {
    pub clients: usize,
    pub connected: usize,
    pub run_secs: f64,
    pub drain_secs: f64,
    pub drained: bool,
    pub iterations: u64,
    pub requests_ok: u64,
    pub request_errors: u64,
    pub first_errors: Vec<String>,
    pub questions_created: usize,
    pub questions_answered: usize,
    pub chat_sent: usize,
    pub runs_finished: usize,
    pub latency_all: Percentiles,
    pub latency_by_method: Vec<(String, Percentiles)>,
    /// `question.requested` delivery: receipt time − the record's `createdAtMs` (ms clock).
    pub event_delay: Percentiles,
    pub events_expected: u64,
    pub events_received: u64,
    pub bytes_received: u64,
    /// Expected events some client never received, by kind.
    pub lost: u64,
    pub lost_by_kind: Vec<(String, u64)>,
    /// Events a client received more than once.
    pub duplicated: u64,
    /// Per-connection `seq` numbers skipped (a frame the gateway numbered but never sent).
    pub seq_gaps: u64,
    /// `seq` numbers that did not increase.
    pub seq_repeats: u64,
    /// Connections the gateway closed before the end.
    pub dropped_clients: usize,
    pub gateway_peak_rss_kib: Option<u64>,
    pub gateway_rss_end_kib: Option<u64>,
    pub gateway_warnings: usize,
    pub gateway_errors: usize,
    pub gateway_exit_ok: Option<bool>,
    /// The first WARN and ERROR lines of the gateway's log.
    pub gateway_log_samples: Vec<String>,
}

impl LoadReport {
    pub fn requests_per_sec(&self) -> f64 {
        self.requests_ok as f64 / self.run_secs.max(1e-9)
    }
    pub fn events_per_sec(&self) -> f64 {
        self.events_received as f64 / (self.run_secs + self.drain_secs).max(1e-9)
    }

    /// Nothing lost, nothing duplicated, nothing failed, and the work settled.
    pub fn clean(&self) -> bool {
        self.lost == 0
            && self.duplicated == 0
            && self.seq_gaps == 0
            && self.seq_repeats == 0
            && self.request_errors == 0
            && self.dropped_clients == 0
            && self.drained
    }

    pub fn markdown(&self, title: &str) -> String {
        let mut s = String::new();
        let rss = |k: Option<u64>| k.map(|k| format!("{:.1} MiB", k as f64 / 1024.0)).unwrap_or_else(|| "n/a".into());
        s.push_str(&format!("# {title}\n\n"));
        s.push_str("| figure | value |\n|---|---|\n");
        s.push_str(&format!("| clients (connected) | {} ({}) |\n", self.clients, self.connected));
        s.push_str(&format!(
            "| run / drain | {:.1} s / {:.1} s (settled: {}) |\n",
            self.run_secs,
            self.drain_secs,
            if self.drained { "yes" } else { "NO" }
        ));
        s.push_str(&format!("| iterations (request + resolve + chat.send) | {} |\n", self.iterations));
        s.push_str(&format!("| requests acknowledged | {} ({:.0}/s) |\n", self.requests_ok, self.requests_per_sec()));
        s.push_str(&format!("| request errors | {} |\n", self.request_errors));
        s.push_str(&format!("| questions created / answered | {} / {} |\n", self.questions_created, self.questions_answered));
        s.push_str(&format!("| chat messages sent / agent runs finished | {} / {} |\n", self.chat_sent, self.runs_finished));
        s.push_str(&format!(
            "| request latency p50 / p99 / max | {:.2} / {:.2} / {:.2} ms |\n",
            self.latency_all.p50, self.latency_all.p99, self.latency_all.max
        ));
        for (m, p) in &self.latency_by_method {
            s.push_str(&format!("| `{m}` p50 / p99 / max | {:.2} / {:.2} / {:.2} ms ({} calls) |\n", p.p50, p.p99, p.max, p.count));
        }
        s.push_str(&format!(
            "| `question.requested` delivery p50 / p99 / max | {:.0} / {:.0} / {:.0} ms |\n",
            self.event_delay.p50, self.event_delay.p99, self.event_delay.max
        ));
        s.push_str(&format!(
            "| events expected / received | {} / {} ({:.0}/s received) |\n",
            self.events_expected,
            self.events_received,
            self.events_per_sec()
        ));
        s.push_str(&format!("| bytes received by clients | {:.1} MiB |\n", self.bytes_received as f64 / 1048576.0));
        s.push_str(&format!("| **lost events** | **{}** |\n", self.lost));
        for (k, n) in &self.lost_by_kind {
            if *n > 0 {
                s.push_str(&format!("| lost `{k}` | {n} |\n"));
            }
        }
        s.push_str(&format!("| **duplicated events** | **{}** |\n", self.duplicated));
        s.push_str(&format!("| per-connection seq gaps / repeats | {} / {} |\n", self.seq_gaps, self.seq_repeats));
        s.push_str(&format!("| connections dropped by the gateway | {} |\n", self.dropped_clients));
        s.push_str(&format!("| gateway peak RSS (VmHWM) | {} |\n", rss(self.gateway_peak_rss_kib)));
        s.push_str(&format!("| gateway RSS at the end | {} |\n", rss(self.gateway_rss_end_kib)));
        s.push_str(&format!("| gateway log WARN / ERROR lines | {} / {} |\n", self.gateway_warnings, self.gateway_errors));
        if let Some(ok) = self.gateway_exit_ok {
            s.push_str(&format!("| gateway exit after SIGTERM | {} |\n", if ok { "clean (0)" } else { "NOT clean" }));
        }
        if !self.gateway_log_samples.is_empty() {
            s.push_str("\nGateway WARN/ERROR lines (first 5):\n\n");
            for l in &self.gateway_log_samples {
                s.push_str(&format!("- `{l}`\n"));
            }
        }
        if !self.first_errors.is_empty() {
            s.push_str("\nFirst request errors:\n\n");
            for e in &self.first_errors {
                s.push_str(&format!("- {e}\n"));
            }
        }
        s
    }
}

/// Ids the generator makes: `lq-<client>-<n>` for questions, `lc-<client>-<n>` for chat.
fn pack(client: usize, n: u64) -> u64 {
    ((client as u64) << 40) | n
}

fn unpack(id: &str, prefix: &str) -> Option<u64> {
    let rest = id.strip_prefix(prefix)?;
    let (c, n) = rest.split_once('-')?;
    Some(pack(c.parse().ok()?, n.parse().ok()?))
}

/// What one client received.
#[derive(Default)]
struct Tally {
    q_requested: HashMap<u64, u32>,
    q_resolved: HashMap<u64, u32>,
    user_rows: HashMap<u64, u32>,
    assistant_rows: HashMap<u64, u32>,
    /// Per run: how often each chat `seq` arrived, and the final's `seq`.
    chat: HashMap<u64, (Vec<u32>, Option<u64>)>,
    last_seq: u64,
    seq_gaps: u64,
    seq_repeats: u64,
    events: u64,
    bytes: u64,
    delays_ms: Vec<u64>,
    closed_by_gateway: bool,
}

impl Tally {
    fn event(&mut self, e: &EventFrame) {
        self.events += 1;
        if let Some(seq) = e.seq {
            if seq == self.last_seq + 1 {
                self.last_seq = seq;
            } else if seq > self.last_seq {
                self.seq_gaps += seq - self.last_seq - 1;
                self.last_seq = seq;
            } else {
                self.seq_repeats += 1;
            }
        }
        let Some(p) = &e.payload else { return };
        let bump = |m: &mut HashMap<u64, u32>, k: Option<u64>| {
            if let Some(k) = k {
                *m.entry(k).or_default() += 1;
            }
        };
        match e.event.as_str() {
            "question.requested" => {
                bump(&mut self.q_requested, p["id"].as_str().and_then(|i| unpack(i, "lq-")));
                if let Some(created) = p["createdAtMs"].as_i64() {
                    self.delays_ms.push((crate::util::now_ms() - created).max(0) as u64 * 1000);
                }
            }
            "question.resolved" => bump(&mut self.q_resolved, p["id"].as_str().and_then(|i| unpack(i, "lq-"))),
            "session.message" => {
                let m = &p["message"];
                match m["role"].as_str() {
                    Some("user") => bump(
                        &mut self.user_rows,
                        m["__openclaw"]["idempotencyKey"].as_str().and_then(|k| unpack(k.strip_suffix(":user")?, "lc-")),
                    ),
                    Some("assistant") if m["__openclaw"]["runTerminal"] == true => {
                        bump(&mut self.assistant_rows, m["__openclaw"]["runId"].as_str().and_then(|k| unpack(k, "lc-")))
                    }
                    _ => {}
                }
            }
            // A run's `chat` and `agent` events share one `seq`: each number arrives once.
            "chat" | "agent" => {
                let (Some(run), Some(seq)) = (p["runId"].as_str().and_then(|k| unpack(k, "lc-")), p["seq"].as_u64()) else { return };
                let entry = self.chat.entry(run).or_default();
                let i = seq as usize;
                if entry.0.len() <= i {
                    entry.0.resize(i + 1, 0);
                }
                entry.0[i] += 1;
                if e.event == "chat" && matches!(p["state"].as_str(), Some("final" | "error" | "aborted")) {
                    entry.1 = Some(seq);
                }
            }
            _ => {}
        }
    }
}

type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<(Result<Value, String>, Instant)>>>>;

/// What one client did.
#[derive(Default)]
struct Done {
    iterations: u64,
    ok: u64,
    errors: Vec<String>,
    latencies: HashMap<&'static str, Vec<u64>>,
    created: Vec<u64>,
    answered: Vec<u64>,
    sent: Vec<u64>,
}

struct LoadClient {
    index: usize,
    sink: futures_util::stream::SplitSink<crate::client::Socket, Message>,
    pending: Pending,
    next: u64,
}

impl LoadClient {
    async fn request(&mut self, method: &'static str, params: Value, done: &mut Done) -> Option<Value> {
        self.next += 1;
        let id = format!("l{}", self.next);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap().insert(id.clone(), tx);
        let started = Instant::now();
        let text = Frame::Req(RequestFrame::new(id.clone(), method, params)).to_json();
        if let Err(e) = self.sink.send(Message::Text(text.into())).await {
            done.errors.push(format!("client {}: {method}: send failed: {e}", self.index));
            return None;
        }
        match tokio::time::timeout(Duration::from_secs(60), rx).await {
            Ok(Ok((Ok(v), at))) => {
                done.ok += 1;
                done.latencies.entry(method).or_default().push(at.duration_since(started).as_micros() as u64);
                Some(v)
            }
            Ok(Ok((Err(e), _))) => {
                done.errors.push(format!("client {}: {method}: {e}", self.index));
                None
            }
            Ok(Err(_)) => {
                done.errors.push(format!("client {}: {method}: connection ended before the response", self.index));
                None
            }
            Err(_) => {
                done.errors.push(format!("client {}: {method}: no response within 60 s", self.index));
                None
            }
        }
    }
}

async fn reader(
    mut stream: futures_util::stream::SplitStream<crate::client::Socket>,
    mut tally: Tally,
    pending: Pending,
    me: usize,
    finished: Arc<Mutex<std::collections::HashSet<u64>>>,
    closing: Arc<std::sync::atomic::AtomicBool>,
) -> Tally {
    while let Some(msg) = stream.next().await {
        let text = match msg {
            Ok(Message::Text(t)) => t,
            Ok(Message::Close(_)) => {
                // The gateway's reply to our own close at the end is not a drop.
                tally.closed_by_gateway = !closing.load(std::sync::atomic::Ordering::SeqCst);
                break;
            }
            Ok(_) => continue,
            Err(_) => break,
        };
        tally.bytes += text.len() as u64;
        match Frame::parse(&text) {
            Ok(Frame::Res(r)) => {
                let at = Instant::now();
                if let Some(tx) = pending.lock().unwrap().remove(&r.id) {
                    let result = if r.ok {
                        Ok(r.payload.unwrap_or(Value::Null))
                    } else {
                        Err(r.error.map(|e| format!("{}: {}", e.code, e.message)).unwrap_or_default())
                    };
                    let _ = tx.send((result, at));
                }
            }
            Ok(Frame::Event(e)) => {
                if e.event == "chat" {
                    if let Some(p) = &e.payload {
                        if matches!(p["state"].as_str(), Some("final" | "error" | "aborted")) {
                            if let Some(run) = p["runId"].as_str().and_then(|k| unpack(k, "lc-")) {
                                if (run >> 40) as usize == me {
                                    finished.lock().unwrap().insert(run);
                                }
                            }
                        }
                    }
                }
                tally.event(&e);
            }
            _ => {}
        }
    }
    tally
}

/// The gateway child process and what it printed.
struct ChildGateway {
    child: Child,
    _dir: tempfile_dir::Dir,
    log: Arc<Mutex<Vec<u8>>>,
}

/// A temporary directory removed on drop (the crate has no tempfile dependency).
mod tempfile_dir {
    pub struct Dir(pub std::path::PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn spawn_gateway(bin: &PathBuf, token: &str, tick_ms: u64) -> Result<(ChildGateway, String), String> {
    let dir = std::env::temp_dir().join(format!("ocui-load-{}", crate::util::uuid_v4()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut child = Command::new(bin)
        .args(["--port", "0", "--tick-ms", &tick_ms.to_string(), "--data-dir"])
        .arg(dir.join("data"))
        .arg("--ui-root")
        .arg(dir.join("no-ui"))
        .env_remove("PORT")
        .env("TOKEN", token)
        .env_remove("TOKEN_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut err = child.stderr.take().unwrap();
    let log2 = log.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = std::io::Read::read(&mut err, &mut buf) {
            if n == 0 {
                break;
            }
            log2.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let addr = loop {
        line.clear();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            let _ = child.kill();
            return Err(format!("the gateway exited before listening: {}", String::from_utf8_lossy(&log.lock().unwrap())));
        }
        if let Some(a) = line.trim().strip_prefix("Gateway listening on ws://") {
            break a.to_string();
        }
    };
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    Ok((ChildGateway { child, _dir: tempfile_dir::Dir(dir), log }, addr))
}

/// Runs the load and returns the report. Stops by itself.
pub async fn run(opts: LoadOptions) -> Result<LoadReport, String> {
    opts.check()?;
    let (mut child, addr) = match (&opts.gateway_bin, &opts.url) {
        (Some(bin), _) => {
            let (c, a) = spawn_gateway(bin, &opts.token, opts.tick_ms)?;
            (Some(c), a)
        }
        (None, Some(url)) => (None, url.trim_start_matches("ws://").trim_end_matches('/').to_string()),
        (None, None) => return Err("give a gateway binary to start or the URL of a running one".into()),
    };
    let pid = child.as_ref().map(|c| c.child.id());
    let url = format!("ws://{addr}");
    let origin = format!("http://{addr}");

    // Sample RSS while running (VmHWM is the kernel's own peak; this is a cross-check).
    let sampling = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampled_peak = Arc::new(std::sync::atomic::AtomicU64::new(0));
    if let Some(pid) = pid {
        let (sampling, peak) = (sampling.clone(), sampled_peak.clone());
        std::thread::spawn(move || {
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(k) = proc_status_kib(pid, "VmRSS:") {
                    peak.fetch_max(k, std::sync::atomic::Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        });
    }

    // Connect everyone first, a few at a time: every client is a page of one Origin, and the
    // gateway lets one Origin hold 16 sockets before `connect` (half that leaves room for the
    // moment between a hello and its slot's release).
    let mut connected = Vec::new();
    let mut first_errors = Vec::new();
    let sem = Arc::new(tokio::sync::Semaphore::new(8));
    let mut joins = Vec::new();
    for i in 0..opts.clients {
        let (url, origin, token, sem) = (url.clone(), origin.clone(), opts.token.clone(), sem.clone());
        joins.push(tokio::spawn(async move {
            let _permit = sem.acquire().await;
            let mut seed = [7u8; 32];
            seed[..8].copy_from_slice(&(i as u64).to_le_bytes());
            let opts = ClientOptions::control_ui(&url, &token, &origin, DeviceIdentity::from_seed(seed));
            tokio::time::timeout(Duration::from_secs(30), Client::handshake(opts))
                .await
                .map_err(|_| "connect timed out".to_string())?
                .map_err(|e| e.to_string())
        }));
    }
    for (i, j) in joins.into_iter().enumerate() {
        match j.await {
            Ok(Ok(c)) => connected.push((i, c)),
            Ok(Err(e)) => first_errors.push(format!("client {i}: connect failed: {e}")),
            Err(e) => first_errors.push(format!("client {i}: {e}")),
        }
    }
    let n_connected = connected.len();

    let start = Instant::now();
    let deadline = tokio::time::Instant::now() + opts.run_for;
    let mut workers = Vec::new();
    let mut readers = Vec::new();
    let mut finished_sets = Vec::new();
    let closing = Arc::new(std::sync::atomic::AtomicBool::new(false));
    for (i, c) in connected {
        let Handshake { socket, events: backlog, .. } = c;
        let (sink, stream) = socket.split();
        let pending: Pending = Arc::default();
        let finished: Arc<Mutex<std::collections::HashSet<u64>>> = Arc::default();
        let mut tally = Tally::default();
        for e in &backlog {
            tally.event(e);
        }
        readers.push(tokio::spawn(reader(stream, tally, pending.clone(), i, finished.clone(), closing.clone())));
        finished_sets.push(finished);
        let mut lc = LoadClient { index: i, sink, pending, next: 0 };
        let think = opts.think;
        workers.push(tokio::spawn(async move {
            let mut done = Done::default();
            let session = format!("load-{i}");
            let mut n: u64 = 0;
            while tokio::time::Instant::now() < deadline {
                n += 1;
                done.iterations += 1;
                let qid = format!("lq-{i}-{n}");
                let params = json!({"id": qid, "sessionKey": session, "timeoutMs": 600_000,
                    "questions": [{"questionId": "pick", "header": "Load", "question": "Pick one", "options": [{"label": "A"}, {"label": "B"}]}]});
                if lc.request("question.request", params, &mut done).await.is_some() {
                    done.created.push(pack(i, n));
                    let r = lc.request("question.resolve", json!({"id": qid, "answers": {"answers": {"pick": ["A"]}}}), &mut done).await;
                    if r.is_some_and(|v| v["status"] == "answered") {
                        done.answered.push(pack(i, n));
                    }
                }
                let key = format!("lc-{i}-{n}");
                let r = lc.request("chat.send", json!({"sessionKey": session, "message": format!("load {i} {n}"), "idempotencyKey": key}), &mut done).await;
                if r.is_some_and(|v| v["status"] == "started") {
                    done.sent.push(pack(i, n));
                }
                if !think.is_zero() {
                    tokio::time::sleep(think).await;
                }
            }
            (lc, done)
        }));
    }
    let mut clients = Vec::new();
    let mut dones = Vec::new();
    for w in workers {
        let (lc, done) = w.await.map_err(|e| e.to_string())?;
        clients.push(lc);
        dones.push(done);
    }
    let run_secs = start.elapsed().as_secs_f64();

    // Drain: every run a client started ends (its own client saw the terminal event), then
    // a short quiet period for the last fan-out.
    let drain_start = Instant::now();
    let drain_deadline = Instant::now() + opts.drain_for;
    let drained = loop {
        let all = dones.iter().zip(&finished_sets).all(|(d, f)| {
            let f = f.lock().unwrap();
            d.sent.iter().all(|r| f.contains(r))
        });
        if all {
            break true;
        }
        if Instant::now() > drain_deadline {
            break false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let drain_secs = drain_start.elapsed().as_secs_f64();
    let rss_end = pid.and_then(|p| proc_status_kib(p, "VmRSS:"));
    let peak_rss = pid.and_then(|p| proc_status_kib(p, "VmHWM:")).map(|k| k.max(sampled_peak.load(std::sync::atomic::Ordering::Relaxed)));

    closing.store(true, std::sync::atomic::Ordering::SeqCst);
    for c in &mut clients {
        let _ = tokio::time::timeout(Duration::from_secs(2), c.sink.send(Message::Close(None))).await;
    }
    let mut tallies = Vec::new();
    for r in readers {
        match tokio::time::timeout(Duration::from_secs(10), r).await {
            Ok(Ok(t)) => tallies.push(t),
            _ => return Err("a client's reader did not finish".into()),
        }
    }

    // Expected events, from what the gateway acknowledged.
    let mut report =
        LoadReport { clients: opts.clients, connected: n_connected, run_secs, drain_secs, drained, first_errors, ..Default::default() };
    let mut latencies: HashMap<&'static str, Vec<u64>> = HashMap::new();
    let (mut created, mut answered, mut sent) = (Vec::new(), Vec::new(), Vec::new());
    for d in dones {
        report.iterations += d.iterations;
        report.requests_ok += d.ok;
        report.request_errors += d.errors.len() as u64;
        for e in d.errors {
            if report.first_errors.len() < 10 {
                report.first_errors.push(e);
            }
        }
        for (m, v) in d.latencies {
            latencies.entry(m).or_default().extend(v);
        }
        created.extend(d.created);
        answered.extend(d.answered);
        sent.extend(d.sent);
    }
    report.questions_created = created.len();
    report.questions_answered = answered.len();
    report.chat_sent = sent.len();
    // A run's length is the `seq` of its terminal event, as any client saw it.
    let mut final_seq: HashMap<u64, u64> = HashMap::new();
    for t in &tallies {
        for (run, (_, fin)) in &t.chat {
            if let Some(f) = fin {
                let e = final_seq.entry(*run).or_default();
                *e = (*e).max(*f);
            }
        }
    }
    report.runs_finished = sent.iter().filter(|r| final_seq.contains_key(r)).count();
    let mut lost: HashMap<&'static str, u64> = HashMap::new();
    let mut delays = Vec::new();
    for t in &tallies {
        report.events_received += t.events;
        report.bytes_received += t.bytes;
        report.seq_gaps += t.seq_gaps;
        report.seq_repeats += t.seq_repeats;
        report.dropped_clients += usize::from(t.closed_by_gateway);
        delays.extend(t.delays_ms.iter().copied());
        let mut check = |kind: &'static str, expected: &[u64], seen: &HashMap<u64, u32>| {
            for id in expected {
                match seen.get(id).copied().unwrap_or(0) {
                    0 => *lost.entry(kind).or_default() += 1,
                    n => report.duplicated += u64::from(n - 1),
                }
            }
            report.events_expected += expected.len() as u64;
        };
        check("question.requested", &created, &t.q_requested);
        check("question.resolved", &answered, &t.q_resolved);
        check("session.message (user)", &sent, &t.user_rows);
        check("session.message (reply)", &sent, &t.assistant_rows);
        for run in &sent {
            let Some(&fin) = final_seq.get(run) else {
                *lost.entry("chat (run never ended)").or_default() += 1;
                report.events_expected += 1;
                continue;
            };
            report.events_expected += fin;
            let counts = t.chat.get(run).map(|(c, _)| c.as_slice()).unwrap_or(&[]);
            for seq in 1..=fin as usize {
                match counts.get(seq).copied().unwrap_or(0) {
                    0 => *lost.entry("chat").or_default() += 1,
                    n => report.duplicated += u64::from(n - 1),
                }
            }
        }
    }
    report.event_delay = Percentiles::of(delays);
    report.lost = lost.values().sum();
    let mut kinds: Vec<(String, u64)> = lost.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    kinds.sort();
    report.lost_by_kind = kinds;
    let mut all = Vec::new();
    let mut by_method: Vec<(String, Percentiles)> = Vec::new();
    for (m, v) in latencies {
        all.extend(v.iter().copied());
        by_method.push((m.to_string(), Percentiles::of(v)));
    }
    by_method.sort_by(|a, b| a.0.cmp(&b.0));
    report.latency_all = Percentiles::of(all);
    report.latency_by_method = by_method;
    report.gateway_peak_rss_kib = peak_rss;
    report.gateway_rss_end_kib = rss_end;

    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
    if let Some(c) = &mut child {
        let _ = Command::new("kill").arg("-TERM").arg(c.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Ok(Some(s)) = c.child.try_wait() {
                break Some(s);
            }
            if Instant::now() > deadline {
                let _ = c.child.kill();
                let _ = c.child.wait();
                break None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        report.gateway_exit_ok = Some(status.is_some_and(|s| s.success()));
        let log = c.log.lock().unwrap();
        let text = String::from_utf8_lossy(&log);
        report.gateway_warnings = text.lines().filter(|l| l.contains(" WARN ")).count();
        report.gateway_errors = text.lines().filter(|l| l.contains(" ERROR ")).count();
        report.gateway_log_samples =
            text.lines().filter(|l| l.contains(" WARN ") || l.contains(" ERROR ")).take(5).map(str::to_string).collect();
    }
    Ok(report)
}

/// Writes `text` to `path`, creating its directory.
pub fn write_report(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::File::create(path)?.write_all(text.as_bytes())
}
