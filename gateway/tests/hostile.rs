//! Bad and unauthorised input to the gateway: scopes on every method, frame limits, and
//! what a guest may see.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use gateway::client::{Client, ClientOptions};
use gateway::{Config, Running};
use protocol::device::DeviceIdentity;
use protocol::methods::{METHOD_SCOPES, scope};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

const TOKEN: &str = "hostile-token";

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
    let mut opts = ClientOptions::control_ui(&format!("ws://{}", gw.addr), TOKEN, &format!("http://{}", gw.addr), DeviceIdentity::from_seed([5; 32]));
    opts.scopes = vec![scope::SESSIONS_WRITE.into()];
    let mut guest = Client::connect(opts).await.unwrap();
    guest.request("sessions.create", json!({"key": "mine"})).await.unwrap();
    admin.request("chat.send", json!({"sessionKey": "theirs", "message": "private words", "idempotencyKey": "p1"})).await.unwrap();
    admin.request("chat.send", json!({"sessionKey": "mine", "message": "shared words", "idempotencyKey": "p2"})).await.unwrap();
    let ev = guest.next_event("session.message", Duration::from_secs(5)).await.unwrap();
    assert_eq!(ev.payload.unwrap()["sessionKey"], "agent:main:mine");
    let mut leaked = false;
    while let Some(ev) = guest.next_event("session.message", Duration::from_millis(500)).await {
        leaked |= ev.payload.unwrap()["sessionKey"] != "agent:main:mine";
    }
    while let Some(ev) = guest.next_event("chat", Duration::from_millis(200)).await {
        leaked |= ev.payload.unwrap()["sessionKey"] != "agent:main:mine";
    }
    assert!(!leaked, "the guest received another session's events");
    let e = guest.request("chat.history", json!({"sessionKey": "theirs"})).await.unwrap_err();
    assert!(e.message.contains("was not found"), "{}", e.message);
    let list = guest.request("sessions.list", json!({})).await.unwrap();
    let keys: Vec<&str> = list["sessions"].as_array().unwrap().iter().map(|s| s["key"].as_str().unwrap()).collect();
    assert_eq!(keys, vec!["agent:main:mine"]);
}
