//! Bad and unauthorised input to the gateway: scopes on every method, frame limits, and
//! what a guest may see.

mod common;

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use gateway::client::{Client, ClientOptions};
use gateway::{Config, Running};
use protocol::device::DeviceIdentity;
use protocol::methods::{METHOD_SCOPES, scope};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

const TOKEN: &str = "hostile-8ec213b9d41387dee7d46741a18a1cce";

async fn start() -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config::local(TOKEN, dir.path().join("data"), dir.path().join("ui"));
    (gateway::start(cfg).await.unwrap(), dir)
}

#[tokio::test]
async fn every_implemented_method_without_its_scope_is_forbidden_naming_the_scope() {
    let (gw, _d) = start().await;
    let mut c = Client::connect(ClientOptions::backend(&format!("ws://{}", gw.addr), TOKEN, &[])).await.unwrap();
    let mut checked = 0;
    for (method, broad, _) in METHOD_SCOPES {
        if !gateway::methods::IMPLEMENTED.contains(method) {
            continue;
        }
        let e = c.request(method, json!({})).await.unwrap_err();
        assert_eq!(e.code, "FORBIDDEN", "{method}: {e:?}");
        assert_eq!(e.message, format!("missing scope: {broad}"), "{method}");
        assert_eq!(e.details.as_ref().unwrap()["missingScope"], *broad, "{method}");
        checked += 1;
    }
    assert_eq!(checked, gateway::methods::IMPLEMENTED.len(), "every implemented method has a scope rule");
}

#[tokio::test]
async fn a_50_mib_pre_connect_frame_is_cut_off_at_the_transport_after_64_kib() {
    let (gw, _d) = start().await;
    let (mut socket, _) = tokio_tungstenite::connect_async(format!("ws://{}", gw.addr)).await.unwrap();
    let _challenge = socket.next().await.unwrap().unwrap();
    // Sent in the background: the gateway stops reading long before 50 MiB arrive.
    let (mut sink, mut stream) = socket.split();
    let huge = "x".repeat(50 * 1024 * 1024);
    let sending = tokio::spawn(async move { sink.send(Message::Text(huge.into())).await.is_ok() });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let end = loop {
        match tokio::time::timeout_at(deadline, stream.next()).await.expect("ended in time") {
            Some(Ok(Message::Close(Some(c)))) => break Some(u16::from(c.code)),
            Some(Ok(_)) => continue,
            _ => break None,
        }
    };
    assert!(matches!(end, Some(1009) | None), "closed with 1009 or dropped: {end:?}");
    // The gateway stopped reading at the limit, so the 50 MiB never all went out: the send is
    // still stuck or failed when the gateway let go. (Before, the gateway read all 50 MiB first.)
    match tokio::time::timeout(Duration::from_secs(3), sending).await {
        Ok(Ok(true)) => panic!("the whole 50 MiB frame was taken in before connect"),
        Ok(_) | Err(_) => {}
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while gw.gateway.pending_connects.load(std::sync::atomic::Ordering::Acquire) != 0 {
        assert!(tokio::time::Instant::now() < deadline, "the slot was never given back");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_pre_connect_frame_over_64_kib_closes_the_socket_with_1009() {
    let (gw, _d) = start().await;
    let (mut socket, _) = tokio_tungstenite::connect_async(format!("ws://{}", gw.addr)).await.unwrap();
    let _challenge = socket.next().await.unwrap().unwrap();
    let big = format!(r#"{{"type":"req","id":"1","method":"connect","params":{{"pad":"{}"}}}}"#, "x".repeat(70 * 1024));
    socket.send(Message::Text(big.into())).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        match tokio::time::timeout_at(deadline, socket.next()).await.expect("closed in time") {
            Some(Ok(Message::Close(Some(c)))) => {
                assert_eq!(u16::from(c.code), 1009);
                break;
            }
            Some(Ok(_)) => continue,
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_guest_never_sees_another_sessions_messages() {
    let (gw, _d) = start().await;
    let mut admin = Client::connect(ClientOptions::backend(&format!("ws://{}", gw.addr), TOKEN, &[scope::ADMIN])).await.unwrap();
    let mut opts =
        ClientOptions::control_ui(&format!("ws://{}", gw.addr), TOKEN, &format!("http://{}", gw.addr), DeviceIdentity::from_seed([5; 32]));
    opts.scopes = vec![scope::SESSIONS_WRITE.into()];
    let mut guest = Client::connect(opts).await.unwrap();
    // A guest makes its own conversation under a key the gateway picks.
    let mine = guest.request("sessions.create", json!({})).await.unwrap()["key"].as_str().unwrap().to_string();
    admin.request("chat.send", json!({"sessionKey": "theirs", "message": "private words", "idempotencyKey": "p1"})).await.unwrap();
    admin.request("chat.send", json!({"sessionKey": mine, "message": "shared words", "idempotencyKey": "p2"})).await.unwrap();
    let ev = guest.next_event("session.message", Duration::from_secs(5)).await.unwrap();
    assert_eq!(ev.payload.unwrap()["sessionKey"], mine.as_str());
    let mut leaked = false;
    while let Some(ev) = guest.next_event("session.message", Duration::from_millis(500)).await {
        leaked |= ev.payload.unwrap()["sessionKey"] != mine.as_str();
    }
    while let Some(ev) = guest.next_event("chat", Duration::from_millis(200)).await {
        leaked |= ev.payload.unwrap()["sessionKey"] != mine.as_str();
    }
    assert!(!leaked, "the guest received another session's events");
    let e = guest.request("chat.history", json!({"sessionKey": "theirs"})).await.unwrap_err();
    assert!(e.message.contains("was not found"), "{}", e.message);
    let list = guest.request("sessions.list", json!({})).await.unwrap();
    let keys: Vec<&str> = list["sessions"].as_array().unwrap().iter().map(|s| s["key"].as_str().unwrap()).collect();
    assert_eq!(keys, vec![mine.as_str()]);
}

// ---------------------------------------------------------------------------------------
// Auth: device signatures, tokens, origins.

use common::{End, Raw, backend_params, ui_params};
use protocol::error::ErrorShape;

/// Sends `connect` on a fresh socket; the refusal and how the socket ended, or the hello.
async fn try_connect(
    gw: &Running,
    origin: Option<&str>,
    params: impl FnOnce(&protocol::connect::ConnectChallenge) -> serde_json::Value,
) -> Result<serde_json::Value, (ErrorShape, End)> {
    let mut raw = Raw::open(&format!("ws://{}", gw.addr), origin).await;
    let p = params(&raw.challenge);
    raw.req("c1", "connect", p).await;
    match raw.response("c1").await {
        Ok(hello) => Ok(hello),
        Err(e) => Err((e, raw.end().await)),
    }
}

fn refused_with(r: Result<serde_json::Value, (ErrorShape, End)>, code: &str) {
    match r {
        Ok(h) => panic!("expected {code}, got a hello: {h}"),
        Err((e, end)) => {
            assert_eq!((e.code.as_str(), e.detail_code()), ("INVALID_REQUEST", Some(code)), "{e:?}");
            assert_eq!(end, End::Closed(1008), "{code}: the socket closes with 1008");
        }
    }
}

/// Re-signs `params.device` after `edit` changed what is signed.
fn resign(identity: &DeviceIdentity, p: &mut protocol::connect::ConnectParams) {
    let d = p.device.as_mut().unwrap();
    let scopes = p.scopes.clone().unwrap_or_default();
    let fields = protocol::device::SignedFields {
        device_id: &d.id,
        client_id: &p.client.id,
        client_mode: &p.client.mode,
        role: "operator",
        scopes: &scopes,
        signed_at_ms: d.signed_at,
        token: p.auth.as_ref().map(|a| a.signing_token()).unwrap_or(""),
        nonce: d.nonce.as_deref().unwrap_or(""),
        platform: &p.client.platform,
        device_family: "",
    };
    d.signature = identity.sign_b64(&fields.payload_v3());
}

#[tokio::test]
async fn device_signatures_that_are_stale_replayed_or_not_the_devices_are_refused_with_their_codes() {
    let (gw, _d) = start().await;
    let origin = format!("http://{}", gw.addr);
    let id = DeviceIdentity::from_seed([21; 32]);
    let other = DeviceIdentity::from_seed([22; 32]);
    let to_value = |p: protocol::connect::ConnectParams| serde_json::to_value(p).unwrap();

    // Inside the ±120 s window (signed 119 s ago and 119 s ahead): accepted.
    for skew in [-119_000i64, 119_000] {
        let hello = try_connect(&gw, Some(&origin), |c| {
            let mut p = ui_params(&id, c, TOKEN);
            p.device.as_mut().unwrap().signed_at = c.ts + skew;
            resign(&id, &mut p);
            to_value(p)
        })
        .await;
        assert!(hello.is_ok(), "skew {skew} ms is inside the window: {:?}", hello.err());
    }
    // Outside it, correctly signed over the stale or future time: expired.
    for skew in [-121_000i64, 121_000, -3_600_000] {
        refused_with(
            try_connect(&gw, Some(&origin), |c| {
                let mut p = ui_params(&id, c, TOKEN);
                p.device.as_mut().unwrap().signed_at = c.ts + skew;
                resign(&id, &mut p);
                to_value(p)
            })
            .await,
            "DEVICE_AUTH_SIGNATURE_EXPIRED",
        );
    }
    // A signature over a previous connection's challenge nonce, replayed on a new socket.
    let mut first = Raw::open(&format!("ws://{}", gw.addr), Some(&origin)).await;
    let captured = ui_params(&id, &first.challenge, TOKEN);
    first.req("c1", "connect", to_value(captured.clone())).await;
    first.response("c1").await.expect("the original connect is accepted");
    refused_with(try_connect(&gw, Some(&origin), |_| to_value(captured.clone())).await, "DEVICE_AUTH_NONCE_MISMATCH");
    // The device id of another key.
    refused_with(
        try_connect(&gw, Some(&origin), |c| {
            let mut p = ui_params(&id, c, TOKEN);
            p.device.as_mut().unwrap().id = other.device_id();
            resign(&id, &mut p);
            to_value(p)
        })
        .await,
        "DEVICE_AUTH_DEVICE_ID_MISMATCH",
    );
    // No nonce; a signature by another key; a public key that does not decode.
    refused_with(
        try_connect(&gw, Some(&origin), |c| {
            let mut p = ui_params(&id, c, TOKEN);
            p.device.as_mut().unwrap().nonce = None;
            to_value(p)
        })
        .await,
        "DEVICE_AUTH_NONCE_REQUIRED",
    );
    refused_with(
        try_connect(&gw, Some(&origin), |c| {
            let mut p = ui_params(&id, c, TOKEN);
            resign(&other, &mut p);
            to_value(p)
        })
        .await,
        "DEVICE_AUTH_SIGNATURE_INVALID",
    );
    refused_with(
        try_connect(&gw, Some(&origin), |c| {
            let mut p = ui_params(&id, c, TOKEN);
            p.device.as_mut().unwrap().public_key = "not base64url!".into();
            to_value(p)
        })
        .await,
        "DEVICE_AUTH_PUBLIC_KEY_INVALID",
    );
    // Signed scopes differ from the sent ones (a scope upgrade after signing).
    refused_with(
        try_connect(&gw, Some(&origin), |c| {
            let mut p = ui_params(&id, c, TOKEN);
            p.scopes.as_mut().unwrap().push(scope::ADMIN.into());
            to_value(p)
        })
        .await,
        "DEVICE_AUTH_SIGNATURE_INVALID",
    );
}

#[tokio::test]
async fn wrong_tokens_of_every_length_and_a_missing_token_are_refused() {
    // About the comparison alone: the backoff after failed sign-ins (hardening.rs) is off.
    let (gw, _d) = common::start_with(TOKEN, |c| c.auth_backoff.free_failures = u32::MAX).await;
    let mut same_len_first = TOKEN.to_string().into_bytes();
    same_len_first[0] ^= 1;
    let mut same_len_last = TOKEN.to_string().into_bytes();
    *same_len_last.last_mut().unwrap() ^= 1;
    let wrong = [
        String::from_utf8(same_len_first).unwrap(),
        String::from_utf8(same_len_last).unwrap(),
        TOKEN.to_uppercase(),
        TOKEN[..TOKEN.len() - 1].to_string(),
        format!("{TOKEN}x"),
        format!("{TOKEN} "),
        format!(" {TOKEN}"),
        "x".repeat(4096),
        "\0".into(),
    ];
    for w in &wrong {
        refused_with(try_connect(&gw, None, |_| backend_params(Some(w), &[scope::ADMIN])).await, "AUTH_TOKEN_MISMATCH");
    }
    refused_with(try_connect(&gw, None, |_| backend_params(Some(""), &[scope::ADMIN])).await, "AUTH_TOKEN_MISMATCH");
    refused_with(try_connect(&gw, None, |_| backend_params(None, &[scope::ADMIN])).await, "AUTH_TOKEN_MISSING");
    // The right token is let in (the refusals above are about the token, nothing else).
    assert!(try_connect(&gw, None, |_| backend_params(Some(TOKEN), &[scope::ADMIN])).await.is_ok());
    // A browser device with a wrong token is refused the same way.
    let origin = format!("http://{}", gw.addr);
    let id = DeviceIdentity::from_seed([23; 32]);
    refused_with(
        try_connect(&gw, Some(&origin), |c| serde_json::to_value(ui_params(&id, c, "hostile-tokeN")).unwrap()).await,
        "AUTH_TOKEN_MISMATCH",
    );
}

/// Every comparison with a configured secret goes through the constant-time `secret_eq`
/// (SHA-256 both sides, then `subtle::ConstantTimeEq`): a plain `==` on a token would fail
/// this.
#[test]
fn tokens_are_only_compared_in_constant_time() {
    let mut files = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() { dirs.push(path) } else { files.push(path) }
        }
    }
    let mut compared = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let mentions_secret = line.contains("config.token") || line.contains(".device_token");
            let plain_eq = line.contains("==") || line.contains("!=") || line.contains(".eq(");
            assert!(!(mentions_secret && plain_eq), "{}:{}: a token compared with ==: {line}", path.display(), n + 1);
            if line.contains("secret_eq(") && mentions_secret {
                compared += 1;
            }
        }
    }
    assert!(compared >= 2, "the gateway token and the device token are compared with secret_eq");
    let util = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/util.rs")).unwrap();
    assert!(util.contains("ct_eq(") && util.contains("use subtle::ConstantTimeEq"));
    assert!(
        gateway::util::secret_eq(TOKEN, TOKEN) && !gateway::util::secret_eq(TOKEN, "hostile-tokeN") && !gateway::util::secret_eq(TOKEN, "")
    );
}

#[tokio::test]
async fn browser_origins_that_are_not_allowed_are_refused() {
    let (gw, _d) = common::start_with(TOKEN, |c| c.allowed_origins = vec!["https://ops.example.com".into()]).await;
    let id = DeviceIdentity::from_seed([24; 32]);
    let port = gw.addr.port();
    let refused = [
        "http://evil.example".to_string(),
        "null".into(),
        "http://127.0.0.1.evil.com".into(),
        "http://localhost.evil:80".into(),
        format!("http://127.0.0.1:{port}/x"),
        "https://ops.example.com.evil".into(),
        "http://ops.example.com".into(),
        "file://".into(),
        // Another local page (a dev server, any other port) is not the gateway's origin.
        "http://localhost:5173".into(),
        format!("http://localhost:{}", port + 1),
        "".into(),
    ];
    // A page from an origin that is not allowed gets no socket at all: 403 at the upgrade.
    for o in refused.iter().filter(|o| !o.is_empty()) {
        assert_eq!(upgrade_status(&gw, Some(o)).await, Some(403), "{o}");
    }
    // Without an Origin there is no upgrade check; the Control UI is refused at connect.
    let r = try_connect(&gw, None, |c| serde_json::to_value(ui_params(&id, c, TOKEN)).unwrap()).await;
    refused_with(r, "CONTROL_UI_ORIGIN_NOT_ALLOWED");
    for o in [format!("http://{}", gw.addr), "https://ops.example.com".into()] {
        let r = try_connect(&gw, Some(&o), |c| serde_json::to_value(ui_params(&id, c, TOKEN)).unwrap()).await;
        assert!(r.is_ok(), "{o} is allowed: {:?}", r.err());
    }
    // Any browser page (an Origin header) must prove a device, whatever client it claims.
    refused_with(
        try_connect(&gw, Some("https://ops.example.com"), |_| backend_params(Some(TOKEN), &[scope::ADMIN])).await,
        "CONTROL_UI_DEVICE_IDENTITY_REQUIRED",
    );
}

/// The HTTP status of a refused upgrade, or None when a socket opened.
async fn upgrade_status(gw: &Running, origin: Option<&str>) -> Option<u16> {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut req = format!("ws://{}", gw.addr).into_client_request().unwrap();
    if let Some(o) = origin {
        req.headers_mut().insert("origin", o.parse().unwrap());
    }
    match tokio_tungstenite::connect_async(req).await {
        Ok(_) => None,
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => Some(resp.status().as_u16()),
        Err(e) => panic!("neither a socket nor an HTTP refusal: {e}"),
    }
}

#[tokio::test]
async fn a_socket_that_never_connects_is_closed_at_its_deadline_and_unauthenticated_sockets_are_capped() {
    assert_eq!(Config::local("t", "d".into(), "u".into()).connect_deadline, Duration::from_secs(10), "the default deadline");
    let (gw, _d) = common::start_with(TOKEN, |c| {
        // Long enough that a connect finishes well inside it on a loaded machine (the
        // fuzz harness runs beside this test in make test).
        c.connect_deadline = Duration::from_millis(2000);
        c.max_unauthenticated = 3;
    })
    .await;
    // Three sockets that say nothing hold every unauthenticated slot: a fourth is refused.
    let mut idle = Vec::new();
    for _ in 0..3 {
        idle.push(Raw::open(&format!("ws://{}", gw.addr), None).await);
    }
    assert_eq!(upgrade_status(&gw, None).await, Some(503), "a fourth socket without connect is refused");
    // A connected socket does not count: after the deadline closes the idle ones, sockets open again.
    for mut raw in idle {
        assert_eq!(raw.end().await, End::Closed(1008), "closed at the deadline, with a policy close");
    }
    // Every slot is given back once the server has ended those sockets, which it does a moment
    // after their close frames: wait on the count itself. (Probing with sockets raced: a probe
    // that got in took a slot of its own while the last idle ones were still being ended.)
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while gw.gateway.pending_connects.load(std::sync::atomic::Ordering::Acquire) != 0 {
        assert!(tokio::time::Instant::now() < deadline, "the slots were never given back");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut connected = Vec::new();
    for _ in 0..4 {
        connected.push(Client::connect(ClientOptions::backend(&format!("ws://{}", gw.addr), TOKEN, &[scope::READ])).await.unwrap());
    }
    assert!(upgrade_status(&gw, None).await.is_none(), "connected sockets hold no unauthenticated slot");
    // And a connected socket is never closed by the deadline.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    connected[0].request("health", json!({})).await.expect("still connected after the deadline");
}

// ---------------------------------------------------------------------------------------
// Bad params and frames: INVALID_REQUEST naming the field.

/// Valid params for every implemented method (the base the bad ones are made from).
fn valid_params(method: &str) -> serde_json::Value {
    match method {
        "sessions.messages.subscribe" | "sessions.messages.unsubscribe" => json!({"key": "main"}),
        "chat.send" => json!({"sessionKey": "main", "message": "hi", "idempotencyKey": "k-valid"}),
        "chat.history" | "chat.abort" => json!({"sessionKey": "main"}),
        "chat.message.get" => json!({"sessionKey": "main", "messageId": "nope"}),
        "sessions.patch" => json!({"key": "hostile-patch", "label": "Hostile"}),
        "sessions.describe" => json!({"key": "main"}),
        "question.request" => {
            json!({"questions": [{"questionId": "a", "header": "H", "question": "Q?", "options": []}], "timeoutMs": 60000})
        }
        "question.get" => json!({"id": "nope"}),
        "question.resolve" => json!({"id": "nope", "cancel": true}),
        "question.waitAnswer" => json!({"id": "nope", "timeoutMs": 1}),
        // Two-phase and short-lived: the first response comes at once, whoever else is connected.
        "exec.approval.request" => json!({"command": "ls -la", "timeoutMs": 1000, "twoPhase": true}),
        "plugin.approval.request" => json!({"title": "T", "description": "D", "timeoutMs": 1000, "twoPhase": true}),
        "exec.approval.get" | "approval.get" | "exec.approval.waitDecision" | "plugin.approval.waitDecision" => json!({"id": "nope"}),
        "exec.approval.resolve" | "plugin.approval.resolve" => json!({"id": "nope", "decision": "deny"}),
        "approval.resolve" => json!({"id": "nope", "kind": "exec", "decision": "deny"}),
        "sessions.rewind" | "sessions.fork" => json!({"sessionKey": "main", "entryId": "nope"}),
        "sessions.search" => json!({"query": "hello"}),
        "tasks.cancel" => json!({"taskId": "nope"}),
        "sessions.abort" => json!({"key": "main"}),
        "push.web.subscribe" => json!({"endpoint": "https://push.invalid/1", "keys": {"p256dh": "x", "auth": "y"}}),
        "push.web.unsubscribe" | "push.web.preferences.get" => json!({"endpoint": "https://push.invalid/1"}),
        "push.web.preferences.set" => json!({"endpoint": "https://push.invalid/1", "scope": "device", "preferences": {"enabled": true}}),
        _ => json!({}),
    }
}

/// A field of each method and a value of the wrong type for it.
fn wrong_type(method: &str) -> Option<(&'static str, serde_json::Value)> {
    Some(match method {
        "sessions.messages.subscribe" | "sessions.messages.unsubscribe" => ("key", json!(5)),
        "chat.send" => ("message", json!({"text": "hi"})),
        "chat.history" => ("limit", json!("ten")),
        "chat.abort" => ("sessionKey", json!(["main"])),
        "question.request" => ("timeoutMs", json!(-1)),
        "question.get" => ("id", json!(7)),
        "question.resolve" => ("cancel", json!("yes")),
        "question.waitAnswer" => ("timeoutMs", json!("soon")),
        "sessions.list" => ("limit", json!(true)),
        "sessions.create" => ("label", json!(1.5)),
        "sessions.patch" => ("label", json!(5)),
        "sessions.describe" => ("key", json!(5)),
        "chat.message.get" => ("messageId", json!(["x"])),
        "exec.approval.request" => ("timeoutMs", json!("soon")),
        "plugin.approval.request" => ("title", json!(5)),
        "exec.approval.get" | "approval.get" => ("id", json!(7)),
        "exec.approval.resolve" | "plugin.approval.resolve" => ("decision", json!(["deny"])),
        "exec.approval.waitDecision" | "plugin.approval.waitDecision" => ("id", json!({"x": 1})),
        "approval.resolve" => ("kind", json!(3)),
        "approval.history" => ("limit", json!("ten")),
        "sessions.rewind" | "sessions.fork" => ("entryId", json!(5)),
        "sessions.search" => ("query", json!(["x"])),
        "tasks.cancel" => ("taskId", json!(5)),
        "tasks.list" => ("limit", json!("ten")),
        "commands.list" => ("scope", json!(5)),
        "sessions.abort" => ("key", json!(5)),
        "push.web.subscribe" => ("keys", json!("k")),
        "push.web.unsubscribe" | "push.web.preferences.get" => ("endpoint", json!(5)),
        "push.web.preferences.set" => ("scope", json!(5)),
        "push.web.test" => ("title", json!(5)),
        _ => return None,
    })
}

#[tokio::test]
async fn unknown_methods_wrong_types_unknown_and_missing_fields_are_invalid_requests_naming_the_field() {
    let (gw, _d) = start().await;
    let mut c = Client::connect(ClientOptions::backend(&format!("ws://{}", gw.addr), TOKEN, &[scope::ADMIN])).await.unwrap();
    let mut tried = 0;
    let invalid = |e: &ErrorShape, what: &str| assert_eq!(e.code, "INVALID_REQUEST", "{what}: {e:?}");
    for method in gateway::methods::IMPLEMENTED {
        // The valid base is accepted (or fails for a reason that is not the params' shape).
        if let Err(e) = c.request(method, valid_params(method)).await {
            assert!(!e.message.contains("params"), "{method}: the valid base was refused: {e:?}");
        }
        let mut extra = valid_params(method);
        extra["zzBogus"] = json!(1);
        let e = c.request(method, extra).await.unwrap_err();
        invalid(&e, method);
        // The methods added with the conversation list word it as the real gateway does.
        assert!(
            e.message.contains("unknown field `zzBogus`") || e.message.ends_with("at root: unexpected property 'zzBogus'"),
            "{method}: {}",
            e.message
        );
        for not_object in [json!(5), json!("params"), json!([1, 2]), json!(null)] {
            let e = c.request(method, not_object.clone()).await;
            // `null` params mean "none": answered as `{}` is (valid for methods without
            // required fields; `exec.approval.request` then says "command is required").
            if not_object.is_null()
                && (e.is_ok()
                    || e.as_ref().err().map(|e| &e.message) == c.request(method, json!({})).await.err().map(|e| e.message).as_ref())
            {
                continue;
            }
            let e = e.unwrap_err();
            invalid(&e, method);
            assert!(e.message.contains(&format!("invalid {method} params")), "{method} with {not_object}: {}", e.message);
            tried += 1;
        }
        if let Some((field, bad)) = wrong_type(method) {
            let mut p = valid_params(method);
            p[field] = bad.clone();
            let e = c.request(method, p).await.unwrap_err();
            invalid(&e, method);
            assert!(e.message.contains(&format!("`{field}`")), "{method}: a wrong type for {field} ({bad}) is not named: {}", e.message);
        }
        // Every required field, removed one at a time, is named as missing.
        if let Some(obj) = valid_params(method).as_object() {
            for key in obj.keys() {
                let mut p = valid_params(method);
                p.as_object_mut().unwrap().remove(key);
                if let Err(e) = c.request(method, p).await {
                    if e.message.contains("missing field") {
                        invalid(&e, method);
                        assert!(e.message.contains(&format!("missing field `{key}`")), "{method}: {}", e.message);
                    }
                }
            }
        }
        tried += 3;
    }
    // Nested fields are named with their path.
    let e = c
        .request("question.request", json!({"questions": [{"questionId": "a", "header": "H", "question": 5, "options": []}]}))
        .await
        .unwrap_err();
    assert!(e.message.contains("`questions.0.question`"), "{}", e.message);
    let e = c.request("question.resolve", json!({"id": "x", "answers": {"answers": {"a": "not a list"}}})).await.unwrap_err();
    assert!(e.message.contains("`answers.answers.a`"), "{}", e.message);
    let e = c.request("question.request", json!({"questions": [{"questionId": "a", "header": "H", "options": []}]})).await.unwrap_err();
    assert!(e.message.contains("missing field `questions.0.question`"), "{}", e.message);
    // Unknown methods, including ones that only look like ours.
    for m in ["no.such.method", "chat.inject", "question.delete", "Health", "health ", "connect.challenge", &"m".repeat(500)] {
        let e = c.request(m, json!({})).await.unwrap_err();
        invalid(&e, m);
        assert!(e.message.starts_with("unknown method: "), "{m}: {}", e.message);
        tried += 1;
    }
    // Frame-level: an unknown top-level field, and wrong types for the frame's own fields.
    let mut raw = Raw::open(&format!("ws://{}", gw.addr), None).await;
    raw.req("c1", "connect", backend_params(Some(TOKEN), &[scope::ADMIN])).await;
    raw.response("c1").await.unwrap();
    raw.send(r#"{"type":"req","id":"f1","method":"health","params":{},"extra":true}"#.into()).await;
    let e = raw.response("f1").await.unwrap_err();
    assert_eq!((e.code.as_str(), e.message.as_str()), ("INVALID_REQUEST", "invalid `req` frame: unknown field `extra`"));
    raw.send(r#"{"type":"req","id":"f2","method":7}"#.into()).await;
    let e = raw.response("f2").await.unwrap_err();
    assert!(e.code == "INVALID_REQUEST" && e.message.contains("`method`"), "{e:?}");
    raw.send(r#"{"type":"req","id":"f3","method":"health","traceparent":{"x":1}}"#.into()).await;
    let e = raw.response("f3").await.unwrap_err();
    assert!(e.code == "INVALID_REQUEST" && e.message.contains("`traceparent`"), "{e:?}");
    raw.send(r#"{"type":"req","id":"f4"}"#.into()).await;
    let e = raw.response("f4").await.unwrap_err();
    assert!(e.code == "INVALID_REQUEST" && e.message.contains("missing field `method`"), "{e:?}");
    // After all that, the connection still works.
    raw.req("ok", "health", json!({})).await;
    assert_eq!(raw.response("ok").await.unwrap()["ok"], true);
    assert!(tried > 60, "{tried}");
}

#[tokio::test]
async fn every_method_without_each_scope_it_needs_is_forbidden_and_its_guest_scope_is_enough() {
    let (gw, _d) = start().await;
    let url = format!("ws://{}", gw.addr);
    let mut checked = 0;
    for (method, broad, narrow) in METHOD_SCOPES {
        if !gateway::methods::IMPLEMENTED.contains(method) {
            continue;
        }
        // Every scope there is, except the ones that grant this method.
        let others: Vec<&str> = scope::ALL
            .iter()
            .copied()
            .filter(|s| s != broad && Some(*s) != *narrow && *s != scope::ADMIN)
            .filter(|s| !(*narrow == Some(scope::SESSIONS_READ) && *s == scope::SESSIONS_WRITE))
            .collect();
        let mut c = Client::connect(ClientOptions::backend(&url, TOKEN, &others)).await.unwrap();
        let e = c.request(method, valid_params(method)).await.unwrap_err();
        assert_eq!((e.code.as_str(), e.message.clone()), ("FORBIDDEN", format!("missing scope: {broad}")), "{method} with {others:?}");
        for granted in [Some(*broad), Some(scope::ADMIN), *narrow].into_iter().flatten() {
            let mut c = Client::connect(ClientOptions::backend(&url, TOKEN, &[granted])).await.unwrap();
            if let Err(e) = c.request(method, valid_params(method)).await {
                // Refused for another reason than the scope (`push.web.*` refuses another
                // device's subscription with FORBIDDEN, as the real gateway does).
                assert!(e.code != "FORBIDDEN" || !e.message.starts_with("missing scope"), "{method} with {granted}: {e:?}");
            }
        }
        checked += 1;
    }
    assert_eq!(checked, gateway::methods::IMPLEMENTED.len());
}

// ---------------------------------------------------------------------------------------
// Payload limits.

#[tokio::test]
async fn a_frame_over_max_payload_closes_with_1009_and_one_just_under_is_read() {
    let (gw, _d) = start().await;
    let url = format!("ws://{}", gw.addr);
    let mut watcher = Client::connect(ClientOptions::backend(&url, TOKEN, &[scope::ADMIN])).await.unwrap();
    let frame_of = |len: usize, id: &str| {
        let head = format!(r#"{{"type":"req","id":"{id}","method":"health","params":{{"pad":""#);
        let tail = r#""}}"#;
        format!("{head}{}{tail}", "x".repeat(len - head.len() - tail.len()))
    };
    let mut raw = Raw::open(&url, None).await;
    raw.req("c1", "connect", backend_params(Some(TOKEN), &[scope::ADMIN])).await;
    raw.response("c1").await.unwrap();
    // Exactly maxPayload: read and answered (the pad is an unknown field).
    raw.send(frame_of(protocol::MAX_PAYLOAD_BYTES, "at-limit")).await;
    let e = raw.response("at-limit").await.unwrap_err();
    assert!(e.message.contains("unknown field `pad`"), "{}", e.message);
    // One byte more: closed with 1009, and the connection is gone from the gateway.
    raw.send(frame_of(protocol::MAX_PAYLOAD_BYTES + 1, "over")).await;
    assert_eq!(raw.end().await, End::Closed(1009));
    assert!(!raw.received.iter().any(|t| t.contains(r#""id":"over""#)), "the oversized request was not answered");
    // Far over (past what the transport reads): closed too, and nothing else is disturbed.
    let mut raw = Raw::open(&url, None).await;
    raw.req("c1", "connect", backend_params(Some(TOKEN), &[scope::ADMIN])).await;
    raw.response("c1").await.unwrap();
    let sent = raw.ws.send(tokio_tungstenite::tungstenite::Message::Text(frame_of(3 * protocol::MAX_PAYLOAD_BYTES, "huge").into())).await;
    if sent.is_ok() {
        let end = raw.end().await;
        assert!(matches!(end, End::Closed(1009) | End::Dropped), "{end:?}");
    }
    let deadline = tokio::time::Instant::now() + common::T;
    while gw.gateway.hub.count() > 1 {
        assert!(tokio::time::Instant::now() < deadline, "oversized connections are dropped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(watcher.request("health", json!({})).await.unwrap()["ok"], true);
}

// ---------------------------------------------------------------------------------------
// Secrets.

/// A secret answer never reaches the database (file, WAL or shared memory), the gateway's
/// output or any event; a plain answer given alongside it does reach the first and the last,
/// so the search is shown to find what is there.
#[tokio::test]
async fn a_secret_answer_is_in_no_database_byte_log_line_or_event() {
    const SECRET: &str = "s3cr3t-VALUE-8f2c91d4";
    const PLAIN: &str = "visible-marker-77a1";
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut gw = common::GatewayProcess::spawn(&data, TOKEN, &[]);
    let url = gw.url();
    let mut asker = Client::connect(ClientOptions::backend(&url, TOKEN, &[scope::ADMIN])).await.unwrap();
    let mut ui = Client::connect(ClientOptions::control_ui(&url, TOKEN, &gw.origin(), DeviceIdentity::from_seed([31; 32]))).await.unwrap();
    let device_token = ui.hello.auth.device_token.clone().unwrap();
    let mut guest_opts = ClientOptions::control_ui(&url, TOKEN, &gw.origin(), DeviceIdentity::from_seed([32; 32]));
    guest_opts.scopes = vec![scope::SESSIONS_WRITE.into()];
    let mut guest = Client::connect(guest_opts).await.unwrap();
    let key = guest.request("sessions.create", json!({"label": "secret-room"})).await.unwrap()["key"].as_str().unwrap().to_string();
    let secret_q = json!({"sessionKey": key, "timeoutMs": 60000, "questions": [
        {"questionId": "token", "header": "Token", "question": "Paste the deploy token", "options": [], "isSecret": true, "secretStore": {"name": "DEPLOY_TOKEN", "kind": "secret"}}]});
    let plain_q = json!({"sessionKey": key, "timeoutMs": 60000, "questions": [{"questionId": "note", "header": "Note", "question": "Anything else?", "options": []}]});
    let id = asker.request("question.request", secret_q).await.unwrap()["id"].as_str().unwrap().to_string();
    let plain_id = asker.request("question.request", plain_q).await.unwrap()["id"].as_str().unwrap().to_string();
    // Malformed attempts carrying the secret first (their errors go to the sender only).
    let _ = ui.request("question.resolve", json!({"id": id, "answers": {"answers": {"token": SECRET}}})).await.unwrap_err();
    let _ =
        ui.request("question.resolve", json!({"id": id, "answers": {"answers": {"token": [SECRET]}, "bogus": SECRET}})).await.unwrap_err();
    let _ = ui.request("question.resolve", json!({"id": id, "answers": {"answers": {"token": [SECRET, SECRET]}}})).await.unwrap_err();
    ui.send_raw(format!(r#"{{"type":"req","id":"bad","method":"question.resolve","params":{{"id":"{id}","answers":{{"answers":{{"token":["{SECRET}"]}}}}}},"x":"{SECRET}"}}"#)).await.unwrap();
    let res = ui.request("question.resolve", json!({"id": id, "answers": {"answers": {"token": [SECRET]}}})).await.unwrap();
    assert_eq!(res["answers"]["answers"]["token"], json!(["stored"]));
    ui.request("question.resolve", json!({"id": plain_id, "answers": {"answers": {"note": [PLAIN]}}})).await.unwrap();
    let waited = asker.request("question.waitAnswer", json!({"id": id, "timeoutMs": 5000})).await.unwrap();
    assert_eq!(waited["answers"]["answers"]["token"], json!(["stored"]));
    let running_files = common::dir_bytes(&data);
    assert!(gw.terminate(), "the gateway stops cleanly on SIGTERM");
    let mut events = Vec::new();
    for c in [&mut asker, &mut ui, &mut guest] {
        c.wait_closed(common::T).await;
        events.extend(c.events.iter().map(|e| serde_json::to_string(e).unwrap()));
    }
    let stopped_files = common::dir_bytes(&data);
    let logs = gw.logs();

    let names: Vec<&str> = running_files.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"gateway.sqlite") && names.contains(&"gateway.sqlite-wal"), "{names:?}");
    for (name, bytes) in running_files.iter().chain(&stopped_files) {
        assert!(!common::contains(bytes, SECRET.as_bytes()), "the secret is in {name}");
    }
    let db_has_plain = |files: &[(String, Vec<u8>)]| files.iter().any(|(_, b)| common::contains(b, PLAIN.as_bytes()));
    assert!(db_has_plain(&running_files) && db_has_plain(&stopped_files), "the plain answer is saved (the search works)");
    let resolved: Vec<&String> = events.iter().filter(|e| e.contains("question.resolved")).collect();
    assert_eq!(resolved.len(), 6, "the asker, the UI and the guest each saw both resolutions: {resolved:?}");
    assert_eq!(resolved.iter().filter(|e| e.contains(PLAIN)).count(), 3, "the plain answer is in its events (the search works)");
    assert_eq!(resolved.iter().filter(|e| e.contains(r#"["stored"]"#)).count(), 3);
    assert!(!events.iter().any(|e| e.contains(SECRET)), "an event carried the secret");
    assert!(!logs.is_empty() && common::contains(&logs, b"connected"), "the gateway's output was captured");
    assert!(!common::contains(&logs, SECRET.as_bytes()), "the gateway's output carried the secret");
    assert!(!common::contains(&logs, TOKEN.as_bytes()), "the output carried the gateway token (given in TOKEN, it is never printed)");
    assert!(!common::contains(&logs, device_token.as_bytes()), "the output carried a device token");
}
