//! The local OpenClaw-compatible gateway (protocol v4).
//!
//! A real server: it serves the built UI with an SPA fallback and the real gateway's CSP,
//! speaks the WebSocket protocol (challenge, closed-schema `connect`, token and Ed25519
//! device auth, the Origin rule, scope enforcement, ticks, per-connection `seq`), and keeps
//! what must survive a restart in SQLite.

pub mod admission;
pub mod agent;
pub mod approvals;
pub mod chat;
pub mod client;
pub mod commands;
pub mod config;
pub mod conn;
pub mod devices;
pub mod handshake;
pub mod http;
pub mod hub;
pub mod load;
pub mod log;
pub mod methods;
pub mod models;
pub mod push;
pub mod questions;
pub mod session_events;
pub mod sessions;
pub mod stop;
pub mod store;
pub mod tasks;
pub mod throttle;
pub mod upgrade;
pub mod util;

impl Gateway {
    /// Whether a fault asks to drop the response to `method`.
    pub fn fault_drops(&self, method: &str) -> bool {
        self.faults.should_drop(method)
    }
}

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

pub use config::Config;

/// Everything a connection handler needs, shared.
pub struct Gateway {
    pub config: Config,
    pub store: store::Store,
    pub hub: hub::Hub,
    pub questions: questions::Questions,
    pub approvals: approvals::Approvals,
    pub runs: chat::Runs,
    /// Sub-agent tasks (`tasks.list`, the demo agent's `delegate`).
    pub tasks: tasks::Tasks,
    /// Web Push (`push.web.*`): where each approval's notification went.
    pub push: push::Push,
    pub lanes: Lanes,
    pub boot_id: String,
    pub started: Instant,
    /// Fault injection for tests (never set in normal runs).
    pub faults: Faults,
    /// In-flight work, and the stop that graceful shutdown drains.
    pub drain: Drain,
    /// Sockets open without a successful `connect` (`admission::PendingSlot`).
    pub pending_connects: std::sync::atomic::AtomicUsize,
    /// The same, per browser Origin.
    pub pending_by_origin: std::sync::Mutex<std::collections::HashMap<String, usize>>,
    /// Every WebSocket this gateway has accepted since it started.
    pub sockets_accepted: std::sync::atomic::AtomicUsize,
    /// Failed sign-ins per remote address and Origin, and the backoff they earned.
    pub auth_throttle: throttle::AuthThrottle,
}

impl Gateway {
    /// A gateway over `store`, not yet serving (tests and the fuzz harness drive it directly).
    pub fn new(config: Config, store: store::Store) -> Arc<Gateway> {
        Arc::new(Gateway {
            config,
            store,
            hub: hub::Hub::default(),
            questions: Default::default(),
            approvals: Default::default(),
            runs: Default::default(),
            tasks: Default::default(),
            push: Default::default(),
            lanes: Lanes::default(),
            faults: Faults::default(),
            drain: Drain::default(),
            pending_connects: Default::default(),
            pending_by_origin: Default::default(),
            sockets_accepted: Default::default(),
            auth_throttle: Default::default(),
            boot_id: util::uuid_v4(),
            started: Instant::now(),
        })
    }
}

/// Counts the requests and agent runs in flight, and says when the gateway is stopping.
///
/// Graceful shutdown: new requests are refused (`UNAVAILABLE`, retryable) once stopping
/// begins; requests already in flight get their responses; runs get until the drain deadline
/// and are then aborted (saved as aborted). Only then are sockets closed.
#[derive(Clone)]
pub struct Drain(Arc<DrainInner>);

struct DrainInner {
    stopping: std::sync::atomic::AtomicBool,
    stop: tokio::sync::watch::Sender<bool>,
    requests: std::sync::atomic::AtomicUsize,
    runs: std::sync::atomic::AtomicUsize,
    aborting: std::sync::atomic::AtomicBool,
}

impl Default for Drain {
    fn default() -> Self {
        let (stop, _) = tokio::sync::watch::channel(false);
        Drain(Arc::new(DrainInner {
            stopping: Default::default(),
            stop,
            requests: Default::default(),
            runs: Default::default(),
            aborting: Default::default(),
        }))
    }
}

/// Held while a request or a run is in flight.
pub struct Work {
    inner: Arc<DrainInner>,
    run: bool,
}

impl Drop for Work {
    fn drop(&mut self) {
        let counter = if self.run { &self.inner.runs } else { &self.inner.requests };
        counter.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drain {
    /// Admits a request, unless the gateway is stopping.
    pub fn request(&self) -> Option<Work> {
        use std::sync::atomic::Ordering::SeqCst;
        // Count first, then check: shutdown sets `stopping` first, then waits for zero, so
        // a request either sees the stop or is waited for.
        self.0.requests.fetch_add(1, SeqCst);
        let work = Work { inner: self.0.clone(), run: false };
        if self.0.stopping.load(SeqCst) {
            return None;
        }
        Some(work)
    }

    /// Counts an agent run (accepted runs are always counted, even while stopping).
    pub fn run(&self) -> Work {
        self.0.runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Work { inner: self.0.clone(), run: true }
    }

    pub fn is_stopping(&self) -> bool {
        self.0.stopping.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Resolves once stopping begins.
    pub fn stopping(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.0.stop.subscribe();
        async move {
            let _ = rx.wait_for(|s| *s).await;
        }
    }

    fn begin(&self) {
        self.0.stopping.store(true, std::sync::atomic::Ordering::SeqCst);
        self.0.stop.send_replace(true);
    }

    /// Runs are being aborted (the drain deadline passed).
    pub fn is_aborting(&self) -> bool {
        self.0.aborting.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn mark_aborting(&self) {
        self.0.aborting.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn in_flight(&self) -> (usize, usize) {
        use std::sync::atomic::Ordering::SeqCst;
        (self.0.requests.load(SeqCst), self.0.runs.load(SeqCst))
    }

    /// Waits until `done` holds or the deadline passes; true when it held.
    async fn until(&self, deadline: tokio::time::Instant, done: impl Fn(&Self) -> bool) -> bool {
        loop {
            if done(self) {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
}

/// One queue per session, so runs of a session happen one after another.
#[derive(Default)]
pub struct Lanes {
    lanes: std::sync::Mutex<std::collections::HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Lanes {
    pub fn lane(&self, session: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.lanes.lock().unwrap_or_else(|p| p.into_inner()).entry(session.to_string()).or_default().clone()
    }
}

/// Test gateway mode: faults the e2e tests switch on to prove the UI loses nothing.
#[derive(Default)]
pub struct Faults {
    /// Close the caller's socket right after handling this method, before its response.
    pub drop_before_response: std::sync::Mutex<Option<String>>,
}

impl Faults {
    pub fn drop_before_response(&self, method: Option<&str>) {
        *self.drop_before_response.lock().unwrap_or_else(|p| p.into_inner()) = method.map(str::to_string);
    }
    fn should_drop(&self, method: &str) -> bool {
        self.drop_before_response.lock().unwrap_or_else(|p| p.into_inner()).as_deref() == Some(method)
    }
}

/// A running gateway.
pub struct Running {
    pub addr: SocketAddr,
    pub gateway: Arc<Gateway>,
    shutdown: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    /// The URL a person opens, with the token in the fragment.
    pub fn ui_url(&self) -> String {
        format!("http://{}/#token={}", self.addr, util::fragment_escape(&self.gateway.config.token))
    }

    /// Graceful shutdown with the default drain time (10 s); see [`Self::shutdown_within`].
    pub async fn shutdown(self) {
        self.shutdown_within(std::time::Duration::from_secs(10)).await
    }

    /// Graceful shutdown: stops accepting connections and requests, lets the requests in
    /// flight finish and answer, gives agent runs until `grace` and then aborts the rest
    /// (their aborted rows are saved), tells every client and closes the sockets after
    /// everything queued for them, and checkpoints SQLite.
    pub async fn shutdown_within(self, grace: std::time::Duration) {
        let gw = &self.gateway;
        let deadline = tokio::time::Instant::now() + grace;
        let _ = self.shutdown.send(true);
        gw.drain.begin();
        // A pending approval holds its request (and maybe a run) until someone decides: end
        // them now (`gateway-restart`, as the real gateway records them) so they answer at once.
        let cancelled = approvals::cancel_all(gw);
        if cancelled > 0 {
            log::info(&format!("stopping: cancelled {cancelled} pending approval(s)"));
        }
        let (requests, runs) = gw.drain.in_flight();
        log::info(&format!("stopping: draining {requests} request(s) and {runs} run(s)"));
        if !gw.drain.until(deadline, |d| d.in_flight().0 == 0).await {
            log::warn(&format!("stopping: {} request(s) still in flight at the deadline", gw.drain.in_flight().0));
        }
        let waiting = chat::abort_waiting(gw);
        if waiting > 0 {
            log::info(&format!("stopping: aborted {waiting} run(s) waiting for an answer"));
        }
        if !gw.drain.until(deadline, |d| d.in_flight().1 == 0).await {
            let aborted = chat::abort_all(gw);
            log::warn(&format!("stopping: aborted {aborted} run(s) still going at the deadline"));
            let late = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
            gw.drain.until(late, |d| d.in_flight() == (0, 0)).await;
        }
        gw.hub.shutdown("gateway stopping");
        let closing = tokio::time::Instant::now() + std::time::Duration::from_secs(3);
        while gw.hub.count() > 0 && tokio::time::Instant::now() < closing {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        // The listener is released when the server task ends (a restart on the same port
        // needs it).
        let _ = self.task.await;
        if let Err(e) = gw.store.checkpoint() {
            log::warn(&format!("stopping: SQLite checkpoint failed: {e}"));
        }
    }
}

/// Binds and starts serving. Refuses a non-loopback bind unless the config allows it, and a
/// weak shared token (`Config::check`).
pub async fn start(config: Config) -> Result<Running, String> {
    config.check()?;
    let store = store::Store::open(&config.data_dir)?;
    let listener = tokio::net::TcpListener::bind((config.bind, config.port))
        .await
        .map_err(|e| format!("cannot listen on {}:{}: {e}", config.bind, config.port))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    // The port in use (0 asked for any): the Origin rule compares Host headers with it.
    let mut config = config;
    config.port = addr.port();
    let gateway = Gateway::new(config, store);
    tokio::spawn(devices::end_revoked_sockets(gateway.clone()));
    let app = http::router(gateway.clone());
    let (tx, mut rx) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(async move {
        // Small request/response frames must not wait for Nagle + delayed ACK (≈40 ms each way):
        // without TCP_NODELAY one client managed 11 question round trips per second.
        use axum::serve::ListenerExt;
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let served = axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
            .with_graceful_shutdown(async move {
                let _ = rx.wait_for(|stop| *stop).await;
            })
            .await;
        if let Err(e) = served {
            log::error(&format!("server stopped: {e}"));
        }
    });
    Ok(Running { addr, gateway, shutdown: tx, task })
}
