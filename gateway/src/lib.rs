//! The local OpenClaw-compatible gateway (protocol v4).
//!
//! A real server: it serves the built UI with an SPA fallback and the real gateway's CSP,
//! speaks the WebSocket protocol (challenge, closed-schema `connect`, token and Ed25519
//! device auth, the Origin rule, scope enforcement, ticks, per-connection `seq`), and keeps
//! what must survive a restart in SQLite.

pub mod agent;
pub mod chat;
pub mod client;
pub mod config;
pub mod conn;
pub mod handshake;
pub mod http;
pub mod hub;
pub mod log;
pub mod methods;
pub mod questions;
pub mod store;
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
    pub runs: chat::Runs,
    pub lanes: Lanes,
    pub boot_id: String,
    pub started: Instant,
    /// Fault injection for tests (never set in normal runs).
    pub faults: Faults,
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

    /// Tells every client the gateway is stopping, closes the sockets and waits for the server.
    pub async fn shutdown(self) {
        self.gateway.hub.shutdown("gateway stopping");
        let _ = self.shutdown.send(true);
        let _ = self.task.await;
    }
}

/// Binds and starts serving. Refuses a non-loopback bind unless the config allows it.
pub async fn start(config: Config) -> Result<Running, String> {
    config.check_bind()?;
    let store = store::Store::open(&config.data_dir)?;
    let listener = tokio::net::TcpListener::bind((config.bind, config.port))
        .await
        .map_err(|e| format!("cannot listen on {}:{}: {e}", config.bind, config.port))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let gateway = Arc::new(Gateway { config, store, hub: hub::Hub::default(), questions: Default::default(), runs: Default::default(), lanes: Lanes::default(), faults: Faults::default(), boot_id: util::uuid_v4(), started: Instant::now() });
    let app = http::router(gateway.clone());
    let (tx, mut rx) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(async move {
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
