//! Harness for the end-to-end tests: real Chromium driven through chromedriver, the local
//! gateway (in process) and the real OpenClaw gateway (through the shared scripts).

pub mod approvals;
pub mod browser;
pub mod model_hold;
pub mod push_service;
pub mod questions;
pub mod real;
pub mod relay;
pub mod scripted_model;

use std::path::PathBuf;
use std::time::Duration;

/// How long a test waits for what the page or a gateway does next before it fails: one
/// constant for every e2e test (longer waits, such as the real gateway's first start, say so
/// where they wait).
pub const T: Duration = Duration::from_secs(30);

/// How long a test waits for a real gateway's turn (its first one loads the agent runtime,
/// which takes long on a loaded machine).
pub const TURN: Duration = Duration::from_secs(90);

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("e2e lives in the repo").to_path_buf()
}

/// The release UI build. `make test` builds it before the e2e tests run.
pub fn dist_dir() -> PathBuf {
    let dist = std::env::var("OCUI_DIST").map(PathBuf::from).unwrap_or_else(|_| repo_root().join("dist"));
    assert!(
        dist.join("index.html").is_file(),
        "no UI build in {}: run `make build` (or `make test`, which builds it) first",
        dist.display()
    );
    dist
}

/// The release UI built for a gateway with `controlUi.basePath: "/ui"` (`--public-url /ui/`).
/// `make test` builds it into `target/dist-ui` before the e2e tests run.
pub fn dist_dir_ui() -> PathBuf {
    let dist = std::env::var("OCUI_DIST_UI").map(PathBuf::from).unwrap_or_else(|_| repo_root().join("target").join("dist-ui"));
    assert!(dist.join("index.html").is_file(), "no /ui/ build in {}: run `make build-ui-base-path` (or `make test`) first", dist.display());
    dist
}

/// Where screenshots of e2e runs go (looked at by people, kept out of git).
pub fn artifacts_dir() -> PathBuf {
    let dir = repo_root().join("target").join("e2e-artifacts");
    std::fs::create_dir_all(&dir).expect("artifacts dir");
    dir
}

/// A word no earlier run wrote (8 hex digits of the clock): a test finds its own rows by it in
/// a gateway's transcript, and a script keyed by it answers only that test's turns.
pub fn nonce() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("the clock is after 1970");
    format!("{:x}", now.as_nanos() % 0xffff_ffff)
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

/// The page origins of the local gateways this test process started, in order.
static E2E_ORIGINS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The local gateway, in process, serving the UI build.
pub struct LocalGateway {
    pub running: Option<gateway::Running>,
    pub token: String,
    pub port: u16,
    pub data_dir: tempfile::TempDir,
    /// Scopes a browser device may be granted (None: all it asks for).
    pub device_scopes: Option<Vec<String>>,
    /// The UI files it serves (the release build unless a test changes it).
    pub ui_root: PathBuf,
}

impl LocalGateway {
    pub async fn start() -> LocalGateway {
        Self::start_with_device_scopes(None).await
    }

    /// A gateway that grants browser devices at most `scopes`.
    pub async fn start_with_device_scopes(scopes: Option<&[&str]>) -> LocalGateway {
        let data_dir = tempfile::tempdir().expect("tempdir");
        // A random 256-bit token: the gateway refuses a weak one.
        let token = gateway::util::random_token();
        let device_scopes = scopes.map(|s| s.iter().map(|x| x.to_string()).collect());
        let mut g = LocalGateway { running: None, token, port: 0, data_dir, device_scopes, ui_root: dist_dir() };
        g.restart_on(0).await;
        g
    }

    /// A gateway that serves the UI from `ui_root` (a changed copy of the build).
    pub async fn start_with_ui_root(ui_root: &std::path::Path) -> LocalGateway {
        let mut g = Self::start_with_device_scopes(None).await;
        g.stop().await;
        g.ui_root = ui_root.to_path_buf();
        g.restart_on(0).await;
        g
    }

    pub fn gateway(&self) -> &std::sync::Arc<gateway::Gateway> {
        &self.running.as_ref().expect("running").gateway
    }

    /// Starts (again) on `port` (0 picks one), keeping the data directory.
    pub async fn restart_on(&mut self, port: u16) {
        let mut cfg = gateway::Config::local(&self.token, self.data_dir.path().to_path_buf(), self.ui_root.clone());
        cfg.device_scopes = self.device_scopes.clone();
        cfg.port = port;
        // Web Push reaches the tests' push service on loopback (its certificate is the tests').
        cfg.push_extra_ca = Some(push_service::ca_file());
        // The gateway accepts pages of its own address only (or configured origins): a test
        // that opens one gateway's page and switches it to another gateway started after it
        // (`#gatewayUrl=`) needs the later one to allow the earlier one's page, as a person
        // would configure with ALLOWED_ORIGINS.
        cfg.allowed_origins = E2E_ORIGINS.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let running = gateway::start(cfg).await.expect("local gateway starts");
        self.port = running.addr.port();
        self.running = Some(running);
        E2E_ORIGINS.lock().unwrap_or_else(|p| p.into_inner()).push(self.base());
    }

    pub async fn stop(&mut self) {
        if let Some(r) = self.running.take() {
            r.shutdown().await;
        }
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn ui_url(&self) -> String {
        format!("{}/#token={}", self.base(), self.token)
    }

    pub fn ws(&self) -> String {
        format!("ws://127.0.0.1:{}", self.port)
    }

    /// A trusted backend client with every scope, playing the agent.
    pub async fn agent(&self) -> gateway::client::Client {
        gateway::client::Client::connect(gateway::client::ClientOptions::backend(
            &self.ws(),
            &self.token,
            &[protocol::methods::scope::ADMIN],
        ))
        .await
        .expect("agent connects")
    }

    pub fn hub(&self) -> &gateway::hub::Hub {
        &self.running.as_ref().expect("running").gateway.hub
    }
}

/// Waits (up to 20 s) until the gateway's database holds exactly `want` user messages in
/// `session`, in order; panics with what it holds if it never does.
pub async fn db_user_texts(gw: &LocalGateway, session: &str, want: &[&str]) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let got = gw.gateway().store.user_texts(session).unwrap();
        if got == want {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "database holds {got:?} in {session}, expected {want:?}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Waits (up to 20 s) until the gateway's database holds at least `n` user messages in
/// `session`, and returns them (fewer if it never does).
pub async fn wait_user_texts(gw: &LocalGateway, session: &str, n: usize) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let got = gw.gateway().store.user_texts(session).unwrap();
        if got.len() >= n || tokio::time::Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

pub use protocol::chat::message_text;

/// Where a gateway (ours or the real one) serves the UI, for flows run against both: its HTTP
/// base (with any base path), the token fragment, and a name for screenshots.
pub struct Target {
    pub base: String,
    pub fragment: String,
    pub name: &'static str,
}

impl Target {
    /// The page at `path_and_query`, with the token.
    pub fn ui(&self, path_and_query: &str) -> String {
        format!("{}{path_and_query}{}", self.base, self.fragment)
    }
}

/// A 2×2 red PNG, for tests that attach an image.
pub const PNG_2X2: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
    0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0xfd, 0xd4, 0x9a, 0x73, 0x00, 0x00, 0x00, 0x10, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63,
    0xf8, 0xcf, 0xc0, 0x00, 0x44, 0x0c, 0x10, 0x0a, 0x00, 0x1f, 0xee, 0x03, 0xfd, 0x8b, 0x5f, 0x14, 0xd4, 0x00, 0x00, 0x00, 0x00, 0x49,
    0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];
