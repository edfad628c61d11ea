//! Helpers shared by the reliability, hostile-input and fuzz tests: an in-process gateway, the
//! real gateway binary as a child process, and a raw socket that speaks frames by hand.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use gateway::{Config, Running};
use protocol::connect::{AuthParams, ClientInfo, ConnectChallenge, ConnectParams};
use protocol::device::DeviceIdentity;
use protocol::error::ErrorShape;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// The HTTP status of a refused WebSocket upgrade with these headers, or None when a socket
/// opened.
pub async fn upgrade_status_with(url: &str, headers: &[(&str, &str)]) -> Option<u16> {
    let mut req = url.into_client_request().unwrap();
    for (k, v) in headers {
        req.headers_mut().insert(tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
    }
    match tokio_tungstenite::connect_async(req).await {
        Ok(_) => None,
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => Some(resp.status().as_u16()),
        Err(e) => panic!("neither a socket nor an HTTP refusal: {e}"),
    }
}

/// Generous bound for anything that should happen "at once" (hang detection, not timing).
pub const T: Duration = Duration::from_secs(10);

pub async fn start_with(token: &str, tweak: impl FnOnce(&mut Config)) -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::local(token, dir.path().join("data"), dir.path().join("ui"));
    tweak(&mut cfg);
    (gateway::start(cfg).await.unwrap(), dir)
}

pub type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A socket driven frame by frame.
pub struct Raw {
    pub ws: Ws,
    pub challenge: ConnectChallenge,
    /// Every text frame received, in order.
    pub received: Vec<String>,
}

/// How a raw exchange ended.
#[derive(Debug, PartialEq)]
pub enum End {
    Closed(u16),
    Dropped,
}

impl Raw {
    pub async fn open(url: &str, origin: Option<&str>) -> Raw {
        match origin {
            Some(o) => Self::open_with_headers(url, &[("origin", o)]).await,
            None => Self::open_with_headers(url, &[]).await,
        }
    }

    /// A socket whose upgrade request carries these headers (`origin`, or a `host` other than
    /// the URL's, as a page reached through another name sends).
    pub async fn open_with_headers(url: &str, headers: &[(&str, &str)]) -> Raw {
        let mut req = url.into_client_request().unwrap();
        for (k, v) in headers {
            req.headers_mut()
                .insert(tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
        }
        let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
        let first = tokio::time::timeout(T, ws.next()).await.expect("challenge in time").unwrap().unwrap().into_text().unwrap();
        let v: Value = serde_json::from_str(&first).unwrap();
        assert_eq!(v["event"], "connect.challenge");
        let challenge = serde_json::from_value(v["payload"].clone()).unwrap();
        Raw { ws, challenge, received: vec![first.to_string()] }
    }

    pub async fn send(&mut self, text: String) {
        self.ws.send(Message::Text(text.into())).await.unwrap();
    }

    pub async fn req(&mut self, id: &str, method: &str, params: Value) {
        self.send(json!({"type":"req","id":id,"method":method,"params":params}).to_string()).await;
    }

    /// Waits for the response to `id`: its payload or its error.
    pub async fn response(&mut self, id: &str) -> Result<Value, ErrorShape> {
        loop {
            let msg = tokio::time::timeout(T, self.ws.next()).await.expect("a response in time");
            let text = match msg {
                Some(Ok(Message::Text(t))) => t.to_string(),
                Some(Ok(Message::Close(c))) => panic!("closed while waiting for {id}: {c:?}"),
                Some(Ok(_)) => continue,
                other => panic!("socket ended while waiting for {id}: {other:?}"),
            };
            self.received.push(text.clone());
            let v: Value = serde_json::from_str(&text).unwrap();
            if v["type"] == "res" && v["id"] == id {
                return if v["ok"] == true { Ok(v["payload"].clone()) } else { Err(serde_json::from_value(v["error"].clone()).unwrap()) };
            }
        }
    }

    /// Reads until the gateway closes the socket (or it drops).
    pub async fn end(&mut self) -> End {
        loop {
            match tokio::time::timeout(T, self.ws.next()).await.expect("the socket ends in time") {
                Some(Ok(Message::Close(Some(c)))) => return End::Closed(u16::from(c.code)),
                Some(Ok(Message::Close(None))) | None | Some(Err(_)) => return End::Dropped,
                Some(Ok(Message::Text(t))) => self.received.push(t.to_string()),
                Some(Ok(_)) => {}
            }
        }
    }
}

/// Signed operator `connect` params for a Control UI device (v3 over the challenge).
pub fn ui_params(identity: &DeviceIdentity, challenge: &ConnectChallenge, token: &str) -> ConnectParams {
    let mut info = ClientInfo::new(protocol::connect::CONTROL_UI_CLIENT_ID, "test", "linux", "webchat");
    info.build_id = Some("dev".into());
    let scopes = protocol::methods::UI_SCOPES.iter().map(|s| s.to_string()).collect();
    ConnectParams::operator(info, scopes, AuthParams { token: Some(token.into()), ..Default::default() }, Some(identity), challenge)
}

/// Backend (no device, no Origin) `connect` params.
pub fn backend_params(token: Option<&str>, scopes: &[&str]) -> Value {
    json!({"minProtocol":4,"maxProtocol":4,"client":{"id":"gateway-client","version":"1","platform":"linux","mode":"backend"},
        "role":"operator","scopes":scopes,"auth":{"token":token}})
}

/// The real gateway binary as a child process, with its stdout and stderr captured.
pub struct GatewayProcess {
    pub child: Child,
    pub addr: String,
    pub stdout: Arc<Mutex<Vec<u8>>>,
    pub stderr: Arc<Mutex<Vec<u8>>>,
}

fn pump(mut from: impl Read + Send + 'static, into: Arc<Mutex<Vec<u8>>>) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            into.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
}

impl GatewayProcess {
    /// Starts `target/.../gateway` on a free loopback port over `data_dir`, with `token` in
    /// its environment (TOKEN).
    pub fn spawn(data_dir: &Path, token: &str, extra: &[&str]) -> GatewayProcess {
        Self::spawn_with_env(data_dir, &[("TOKEN", token)], extra)
    }

    /// The same, with these variables set (TOKEN, TOKEN_FILE, PORT, DATA_DIR and
    /// ALLOWED_ORIGINS are cleared first).
    pub fn spawn_with_env(data_dir: &Path, env: &[(&str, &str)], extra: &[&str]) -> GatewayProcess {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gateway"));
        cmd.args(["--port", "0", "--tick-ms", "30000", "--data-dir"])
            .arg(data_dir)
            .arg("--ui-root")
            .arg(data_dir.join("no-ui"))
            .args(extra)
            .env_remove("PORT")
            .env_remove("TOKEN")
            .env_remove("TOKEN_FILE")
            .env_remove("ALLOWED_ORIGINS")
            .env_remove("DATA_DIR");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("the gateway binary starts");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        pump(child.stderr.take().unwrap(), stderr.clone());
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let mut lines = BufReader::new(child.stdout.take().unwrap());
        let mut addr = None;
        let mut line = String::new();
        while addr.is_none() {
            line.clear();
            if lines.read_line(&mut line).unwrap_or(0) == 0 {
                panic!("the gateway exited before listening: {}", String::from_utf8_lossy(&stderr.lock().unwrap()));
            }
            stdout.lock().unwrap().extend_from_slice(line.as_bytes());
            if let Some(a) = line.trim().strip_prefix("Gateway listening on ws://") {
                addr = Some(a.to_string());
            }
        }
        pump(lines, stdout.clone());
        GatewayProcess { child, addr: addr.unwrap(), stdout, stderr }
    }

    pub fn url(&self) -> String {
        format!("ws://{}", self.addr)
    }

    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// SIGTERM, then waits for the exit (bounded); returns whether it exited successfully.
    pub fn terminate(&mut self) -> bool {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.success();
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// kill -9.
    pub fn kill9(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    pub fn logs(&self) -> Vec<u8> {
        let mut all = self.stdout.lock().unwrap().clone();
        all.extend_from_slice(&self.stderr.lock().unwrap());
        all
    }
}

impl Drop for GatewayProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Whether `needle` occurs in `hay`.
pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The bytes of every file in `dir` (the SQLite database, its WAL and its shared memory).
pub fn dir_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| (e.file_name().to_string_lossy().to_string(), std::fs::read(e.path()).unwrap()))
        .collect()
}

/// An HTTP/1.0 GET with extra header lines (each ending in `\r\n`). The body ends with the
/// connection, so no chunked decoding is needed. Returns the status line, the lowercased
/// headers and the raw body.
pub async fn http_get(addr: std::net::SocketAddr, path: &str, extra_headers: &str) -> (String, Vec<(String, String)>, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n{extra_headers}\r\n").as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(T, tcp.read_to_end(&mut raw)).await.expect("response in time").unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a header block");
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().to_string();
    let headers = lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string())).collect();
    (status, headers, raw[split + 4..].to_vec())
}

/// A response header by lowercased name.
pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// A browser Control UI client of `gw`: a signed device from `seed`, the UI's scopes.
pub async fn ui_client(gw: &Running, token: &str, seed: u8) -> gateway::client::Client {
    gateway::client::Client::connect(gateway::client::ClientOptions::control_ui(
        &format!("ws://{}", gw.addr),
        token,
        &format!("http://{}", gw.addr),
        DeviceIdentity::from_seed([seed; 32]),
    ))
    .await
    .unwrap()
}
