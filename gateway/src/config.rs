//! Gateway configuration: flags, environment and defaults.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

#[derive(Clone)]
pub struct Config {
    pub bind: IpAddr,
    pub port: u16,
    /// Exposing the gateway beyond loopback must be asked for explicitly.
    pub allow_non_loopback: bool,
    pub token: String,
    pub data_dir: PathBuf,
    /// The built UI (`dist/`).
    pub ui_root: PathBuf,
    pub tick_interval_ms: u64,
    /// Browser origins allowed besides loopback ones and the gateway's own.
    pub allowed_origins: Vec<String>,
    pub version: String,
    /// When set, connections with a device identity are granted at most these scopes.
    pub device_scopes: Option<Vec<String>>,
    /// Sockets that may be open at once without a successful `connect` (more get 503).
    pub max_unauthenticated: usize,
    /// A socket that has not connected this long after opening is closed.
    pub connect_deadline: std::time::Duration,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("bind", &self.bind)
            .field("port", &self.port)
            .field("token", &"<redacted>")
            .field("data_dir", &self.data_dir)
            .field("ui_root", &self.ui_root)
            .finish_non_exhaustive()
    }
}

impl Config {
    /// Defaults for tests: loopback, a free port, the given token and directories.
    pub fn local(token: &str, data_dir: PathBuf, ui_root: PathBuf) -> Self {
        Config {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            allow_non_loopback: false,
            token: token.to_string(),
            data_dir,
            ui_root,
            tick_interval_ms: protocol::TICK_INTERVAL_MS,
            allowed_origins: Vec::new(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            device_scopes: None,
            max_unauthenticated: 256,
            connect_deadline: std::time::Duration::from_secs(10),
        }
    }

    pub fn check_bind(&self) -> Result<(), String> {
        if !self.bind.is_loopback() && !self.allow_non_loopback {
            return Err(format!(
                "refusing to listen on {}: it is not a loopback address, so anyone on the network could reach the gateway. Pass --allow-non-loopback to do it anyway.",
                self.bind
            ));
        }
        if self.token.is_empty() {
            return Err("the gateway token must not be empty".into());
        }
        Ok(())
    }
}
