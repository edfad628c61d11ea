//! The handshake against a running local gateway, over a real socket.

use std::time::Duration;

use gateway::client::{Client, ClientOptions, ConnectError};
use gateway::{Config, Running};
use protocol::device::DeviceIdentity;
use protocol::methods::scope;

const TOKEN: &str = "handshake-f5004a7b075be2c35339c9b3e5ecf768";

async fn start(tick_ms: u64) -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::local(TOKEN, dir.path().join("data"), dir.path().join("ui"));
    cfg.tick_interval_ms = tick_ms;
    (gateway::start(cfg).await.unwrap(), dir)
}

fn ws(r: &Running) -> String {
    format!("ws://{}", r.addr)
}

fn origin(r: &Running) -> String {
    format!("http://{}", r.addr)
}

fn refused(e: ConnectError) -> protocol::error::ErrorShape {
    match e {
        ConnectError::Refused(e) => e,
        ConnectError::Transport(t) => panic!("expected a refusal, got transport error {t}"),
    }
}

#[tokio::test]
async fn control_ui_connects_with_a_signed_device_and_gets_its_scopes() {
    let (gw, _dir) = start(30_000).await;
    let c = Client::connect(ClientOptions::control_ui(&ws(&gw), TOKEN, &origin(&gw), DeviceIdentity::from_seed([1; 32]))).await.unwrap();
    assert_eq!(c.hello.protocol, 4);
    // Every scope the UI asks for (operator.admin among them, as the incumbent asks).
    assert_eq!(c.hello.auth.scopes, protocol::methods::UI_SCOPES.to_vec());
    assert!(c.hello.auth.device_token.is_some(), "a device token is issued");
    assert_eq!(c.hello.policy.tick_interval_ms, Some(30_000));
    assert!(c.hello.features.methods.iter().any(|m| m == "health"));
}

#[tokio::test]
async fn the_device_token_alone_reconnects_and_a_wrong_one_is_refused() {
    let (gw, _dir) = start(30_000).await;
    let seed = [2; 32];
    let first = Client::connect(ClientOptions::control_ui(&ws(&gw), TOKEN, &origin(&gw), DeviceIdentity::from_seed(seed))).await.unwrap();
    let device_token = first.hello.auth.device_token.clone().unwrap();
    let mut opts = ClientOptions::control_ui(&ws(&gw), TOKEN, &origin(&gw), DeviceIdentity::from_seed(seed));
    opts.token = None;
    opts.device_token = Some(device_token.clone());
    let again = Client::connect(opts).await.unwrap();
    assert_eq!(again.hello.auth.device_token, Some(device_token));
    let mut opts = ClientOptions::control_ui(&ws(&gw), TOKEN, &origin(&gw), DeviceIdentity::from_seed(seed));
    opts.token = None;
    opts.device_token = Some("forged".into());
    assert_eq!(refused(Client::connect(opts).await.err().unwrap()).detail_code(), Some("AUTH_DEVICE_TOKEN_MISMATCH"));
}

#[tokio::test]
async fn wrong_and_missing_tokens_are_refused_with_their_codes() {
    let (gw, _dir) = start(30_000).await;
    let e = refused(
        Client::connect(ClientOptions::control_ui(&ws(&gw), "nope", &origin(&gw), DeviceIdentity::from_seed([3; 32]))).await.err().unwrap(),
    );
    assert_eq!((e.code.as_str(), e.detail_code()), ("INVALID_REQUEST", Some("AUTH_TOKEN_MISMATCH")));
    assert!(e.message.contains("token mismatch"), "{}", e.message);
    let mut opts = ClientOptions::backend(&ws(&gw), TOKEN, &[scope::ADMIN]);
    opts.token = None;
    assert_eq!(refused(Client::connect(opts).await.err().unwrap()).detail_code(), Some("AUTH_TOKEN_MISSING"));
}

#[tokio::test]
async fn control_ui_needs_an_allowed_origin_and_a_device() {
    let (gw, _dir) = start(30_000).await;
    let mut no_origin = ClientOptions::control_ui(&ws(&gw), TOKEN, "x", DeviceIdentity::from_seed([4; 32]));
    no_origin.origin = None;
    assert_eq!(refused(Client::connect(no_origin).await.err().unwrap()).detail_code(), Some("CONTROL_UI_ORIGIN_NOT_ALLOWED"));
    // A page from another origin gets no socket at all: 403 at the upgrade.
    let evil = ClientOptions::control_ui(&ws(&gw), TOKEN, "http://evil.example", DeviceIdentity::from_seed([4; 32]));
    match Client::connect(evil).await.err().unwrap() {
        ConnectError::Transport(t) => assert!(t.contains("403"), "{t}"),
        ConnectError::Refused(e) => panic!("expected 403 at the upgrade, got {e:?}"),
    }
    let mut no_device = ClientOptions::control_ui(&ws(&gw), TOKEN, &origin(&gw), DeviceIdentity::from_seed([4; 32]));
    no_device.identity = None;
    assert_eq!(refused(Client::connect(no_device).await.err().unwrap()).detail_code(), Some("CONTROL_UI_DEVICE_IDENTITY_REQUIRED"));
}

#[tokio::test]
async fn a_refused_connect_closes_with_1008() {
    let (gw, _dir) = start(30_000).await;
    let (mut socket, _) = tokio_tungstenite::connect_async(ws(&gw)).await.unwrap();
    use futures_util::{SinkExt, StreamExt};
    let _challenge = socket.next().await.unwrap().unwrap();
    socket.send(r#"{"type":"req","id":"1","method":"connect","params":{"minProtocol":4,"maxProtocol":4,"client":{"id":"cli","version":"1","platform":"x","mode":"cli","bogus":1}}}"#.into()).await.unwrap();
    let res = socket.next().await.unwrap().unwrap().into_text().unwrap();
    assert!(res.contains("unknown field `client.bogus`"), "{res}");
    match socket.next().await.unwrap().unwrap() {
        tokio_tungstenite::tungstenite::Message::Close(Some(c)) => assert_eq!(u16::from(c.code), 1008),
        other => panic!("expected a close, got {other:?}"),
    }
}

#[tokio::test]
async fn protocol_mismatch_names_both_versions() {
    let (gw, _dir) = start(30_000).await;
    let (mut socket, _) = tokio_tungstenite::connect_async(ws(&gw)).await.unwrap();
    use futures_util::{SinkExt, StreamExt};
    let _challenge = socket.next().await.unwrap().unwrap();
    socket.send(r#"{"type":"req","id":"1","method":"connect","params":{"minProtocol":5,"maxProtocol":6,"client":{"id":"cli","version":"1","platform":"x","mode":"cli"},"auth":{"token":"test-token"}}}"#.into()).await.unwrap();
    let res = socket.next().await.unwrap().unwrap().into_text().unwrap();
    assert!(res.contains("v5–v6") && res.contains("speaks v4") && res.contains("PROTOCOL_MISMATCH"), "{res}");
}

#[tokio::test]
async fn missing_scope_is_forbidden_with_the_scope_named_and_unknown_methods_are_invalid() {
    let (gw, _dir) = start(30_000).await;
    let mut c = Client::connect(ClientOptions::backend(&ws(&gw), TOKEN, &[scope::WRITE])).await.unwrap();
    let e = c.request("health", serde_json::json!({})).await.unwrap_err();
    assert_eq!((e.code.as_str(), e.message.as_str()), ("FORBIDDEN", "missing scope: operator.read"));
    assert_eq!(e.details.unwrap()["missingScope"], "operator.read");
    let e = c.request("no.such.method", serde_json::json!({})).await.unwrap_err();
    assert_eq!((e.code.as_str(), e.message.as_str()), ("INVALID_REQUEST", "unknown method: no.such.method"));
}

#[tokio::test]
async fn malformed_frames_are_answered_or_ignored_and_the_connection_survives() {
    let (gw, _dir) = start(30_000).await;
    let mut c = Client::connect(ClientOptions::backend(&ws(&gw), TOKEN, &[scope::READ])).await.unwrap();
    c.send_raw("{not json".into()).await.unwrap();
    c.send_raw(r#"{"type":"cancel","id":"x"}"#.into()).await.unwrap();
    c.send_raw(r#"{"type":"req","id":"z","method":"health","params":{},"extra":true}"#.into()).await.unwrap();
    let ok = c.request("health", serde_json::json!({})).await.unwrap();
    assert_eq!(ok["ok"], true);
}

#[tokio::test]
async fn ticks_arrive_with_increasing_per_connection_seq() {
    let (gw, _dir) = start(50).await;
    let mut c = Client::connect(ClientOptions::backend(&ws(&gw), TOKEN, &[scope::READ])).await.unwrap();
    let a = c.next_event("tick", Duration::from_secs(5)).await.unwrap();
    let b = c.next_event("tick", Duration::from_secs(5)).await.unwrap();
    assert!(b.seq.unwrap() > a.seq.unwrap());
    assert!(a.payload.unwrap()["ts"].as_i64().unwrap() > 0);
}

#[tokio::test]
async fn a_non_loopback_bind_is_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::local(TOKEN, dir.path().join("d"), dir.path().join("ui"));
    cfg.bind = "0.0.0.0".parse().unwrap();
    let err = gateway::start(cfg).await.err().unwrap();
    assert!(err.contains("not a loopback address"), "{err}");
}

#[tokio::test]
async fn shutdown_tells_clients_and_closes() {
    let (gw, _dir) = start(30_000).await;
    let mut c = Client::connect(ClientOptions::backend(&ws(&gw), TOKEN, &[scope::READ])).await.unwrap();
    gw.shutdown().await;
    let ev = c.next_event("shutdown", Duration::from_secs(5)).await.unwrap();
    assert_eq!(ev.payload.unwrap()["reason"], "gateway stopping");
}

/// A control-UI client with only a device token (no shared token).
fn with_device_token(gw: &Running, seed: [u8; 32], device_token: &str) -> ClientOptions {
    let mut opts = ClientOptions::control_ui(&ws(gw), TOKEN, &origin(gw), DeviceIdentity::from_seed(seed));
    opts.token = None;
    opts.device_token = Some(device_token.to_string());
    opts
}

#[tokio::test]
async fn a_device_token_is_stored_only_as_a_hash_ends_with_its_shared_token_and_can_be_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let cfg = |token: &str| Config::local(token, data.clone(), dir.path().join("ui"));
    let seed = [7; 32];
    let gw = gateway::start(cfg(TOKEN)).await.unwrap();
    let first = Client::connect(ClientOptions::control_ui(&ws(&gw), TOKEN, &origin(&gw), DeviceIdentity::from_seed(seed))).await.unwrap();
    let device_token = first.hello.auth.device_token.clone().unwrap();
    drop(first);
    gw.shutdown().await;
    // The data directory is this user's only, and no byte of the database holds the token.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&data).unwrap().permissions().mode() & 0o777, 0o700);
    }
    let mut db = Vec::new();
    for f in std::fs::read_dir(&data).unwrap() {
        db.extend(std::fs::read(f.unwrap().path()).unwrap());
    }
    assert!(!db.windows(device_token.len()).any(|w| w == device_token.as_bytes()), "the device token is in the data directory");

    // A new shared token: the device token paired under the old one no longer works.
    let gw = gateway::start(cfg("another-e38532b6e2d8fff6c940819978ab9032")).await.unwrap();
    let e = refused(Client::connect(with_device_token(&gw, seed, &device_token)).await.err().unwrap());
    assert_eq!(e.detail_code(), Some("AUTH_DEVICE_TOKEN_MISMATCH"));
    assert!(e.message.contains("gateway token changed"), "{}", e.message);
    gw.shutdown().await;

    // Back under the original shared token it works, until `gateway devices revoke`.
    let gw = gateway::start(cfg(TOKEN)).await.unwrap();
    let again = Client::connect(with_device_token(&gw, seed, &device_token)).await.unwrap();
    assert_eq!(again.hello.auth.device_token.as_deref(), Some(device_token.as_str()), "the same token while nothing changed");
    let device_id = DeviceIdentity::from_seed(seed).device_id();
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_gateway"))
            .arg("devices")
            .args(args)
            .arg("--data-dir")
            .arg(&data)
            .output()
            .unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
    };
    let (ok, listed) = cli(&["list"]);
    assert!(ok && listed.contains(&device_id) && listed.contains("active"), "{listed}");
    assert!(!listed.contains(&device_token), "the list never shows a token");
    let (ok, said) = cli(&["revoke", &device_id]);
    assert!(ok, "{said}");
    let e = refused(Client::connect(with_device_token(&gw, seed, &device_token)).await.err().unwrap());
    assert!(e.message.contains("revoked"), "{}", e.message);
    assert!(cli(&["list"]).1.contains("revoked"));
    assert!(!cli(&["revoke", "no-such-device"]).0, "an unknown device is an error");
    // Pairing again with the shared token gives a new token; the revoked one stays dead.
    let paired = Client::connect(ClientOptions::control_ui(&ws(&gw), TOKEN, &origin(&gw), DeviceIdentity::from_seed(seed))).await.unwrap();
    let new_token = paired.hello.auth.device_token.clone().unwrap();
    assert_ne!(new_token, device_token);
    assert!(Client::connect(with_device_token(&gw, seed, &device_token)).await.is_err());
    assert!(Client::connect(with_device_token(&gw, seed, &new_token)).await.is_ok());
}

/// A connected peer that never answers the gateway's keepalive pings (a frozen or half-open
/// one) is dropped, as the real gateway drops it. The peer here reads the raw TCP stream, so
/// nothing answers a ping: the outcome does not depend on how fast either side runs.
#[tokio::test]
async fn a_peer_that_never_answers_pings_is_dropped() {
    use tokio::io::AsyncReadExt;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::local(TOKEN, dir.path().join("data"), dir.path().join("ui"));
    cfg.keepalive = Duration::from_millis(100);
    let gw = gateway::start(cfg).await.unwrap();
    let hs = Client::handshake(ClientOptions::backend(&ws(&gw), TOKEN, &[scope::READ])).await.unwrap();
    let mut tcp = match hs.socket.into_inner() {
        tokio_tungstenite::MaybeTlsStream::Plain(tcp) => tcp,
        _ => unreachable!("plain ws"),
    };
    let mut bytes = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(30), tcp.read_to_end(&mut bytes)).await;
    assert!(read.is_ok(), "the gateway kept a peer that answers no ping for 30 s");
    // 0x89: an unmasked ping frame (FIN + opcode 9).
    assert!(bytes.contains(&0x89), "the gateway never pinged before dropping the peer");
}

/// A client waiting on something else still answers pings (its socket is read all the time),
/// so the gateway keeps it: here through at least three keepalive rounds, counted by the pings
/// the gateway sent, not by a clock.
#[tokio::test]
async fn a_waiting_client_answers_pings_and_stays_connected() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::local(TOKEN, dir.path().join("data"), dir.path().join("ui"));
    cfg.keepalive = Duration::from_secs(1);
    let gw = gateway::start(cfg).await.unwrap();
    let mut c = Client::connect(ClientOptions::backend(&ws(&gw), TOKEN, &[scope::READ])).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while c.pings_answered() < 3 {
        assert!(tokio::time::Instant::now() < deadline, "the client answered {} pings in 60 s", c.pings_answered());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(c.request("health", serde_json::json!({})).await.is_ok(), "the gateway dropped a client that answered its pings");
}
