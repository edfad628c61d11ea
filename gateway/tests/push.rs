//! `push.web.*` as the real gateway 2026.9.6 answers it: the VAPID key kept, subscriptions
//! bound to the device that made them, device preferences, and its refusals. Delivery through
//! a push service is tested end to end (`e2e/tests/flows/reach.rs`).

use gateway::client::{Client, ClientOptions};
use gateway::{Config, Running};
use protocol::device::{DeviceIdentity, decode_b64url};
use protocol::methods::scope;
use serde_json::json;

const TOKEN: &str = "push-4b0e3b3f9ad34c5a8d2f0c1e6a7b9d10";
const ENDPOINT: &str = "https://push.invalid/subscription/1";

async fn start(dir: &tempfile::TempDir) -> Running {
    gateway::start(Config::local(TOKEN, dir.path().join("data"), dir.path().join("ui"))).await.unwrap()
}

async fn browser(gw: &Running, seed: u8) -> Client {
    let opts = ClientOptions::control_ui(
        &format!("ws://{}", gw.addr),
        TOKEN,
        &format!("http://{}", gw.addr),
        DeviceIdentity::from_seed([seed; 32]),
    );
    Client::connect(opts).await.unwrap()
}

/// A subscription's keys as a browser sends them: a P-256 point and 16 bytes, base64url.
fn keys() -> serde_json::Value {
    let point = p256::SecretKey::from_slice(&[3u8; 32]).unwrap().public_key();
    let p256dh = protocol::device::encode_b64url(p256::elliptic_curve::sec1::ToEncodedPoint::to_encoded_point(&point, false).as_bytes());
    json!({"p256dh": p256dh, "auth": protocol::device::encode_b64url(&[9u8; 16])})
}

#[tokio::test]
async fn the_vapid_key_is_made_once_and_kept_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let gw = start(&dir).await;
    let mut c = browser(&gw, 1).await;
    let key = c.request("push.web.vapidPublicKey", json!({})).await.unwrap()["vapidPublicKey"].as_str().unwrap().to_string();
    let bytes = decode_b64url(&key).unwrap();
    assert_eq!((bytes.len(), bytes[0]), (65, 4), "an uncompressed P-256 point");
    assert_eq!(c.request("push.web.vapidPublicKey", json!({})).await.unwrap()["vapidPublicKey"], json!(key));
    drop(c);
    gw.shutdown().await;
    let gw = start(&dir).await;
    let mut c = browser(&gw, 1).await;
    assert_eq!(
        c.request("push.web.vapidPublicKey", json!({})).await.unwrap()["vapidPublicKey"],
        json!(key),
        "the same key after a restart"
    );
}

#[tokio::test]
async fn a_subscription_is_bound_to_its_device_and_refused_as_the_real_gateway_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let gw = start(&dir).await;
    let mut a = browser(&gw, 1).await;
    let e = a.request("push.web.subscribe", json!({"endpoint": "http://127.0.0.1:9/x", "keys": keys()})).await.unwrap_err();
    assert_eq!(e.message, "invalid push.web.subscribe params: at /endpoint: must match pattern \"^https://\"");
    let e =
        a.request("push.web.subscribe", json!({"endpoint": ENDPOINT, "keys": {"p256dh": "bm90IGEga2V5", "auth": "YQ"}})).await.unwrap_err();
    assert_eq!(e.code, "UNAVAILABLE");
    assert!(e.message.starts_with("invalid push subscription keys: "), "{e:?}");
    let mut backend = Client::connect(ClientOptions::backend(&format!("ws://{}", gw.addr), TOKEN, &[scope::ADMIN])).await.unwrap();
    let e = backend.request("push.web.subscribe", json!({"endpoint": ENDPOINT, "keys": keys()})).await.unwrap_err();
    assert_eq!(e.message, "paired browser device identity required");

    let first = a.request("push.web.subscribe", json!({"endpoint": ENDPOINT, "keys": keys()})).await.unwrap()["subscriptionId"].clone();
    let again = a.request("push.web.subscribe", json!({"endpoint": ENDPOINT, "keys": keys()})).await.unwrap()["subscriptionId"].clone();
    assert_eq!(first, again, "the same endpoint keeps its subscription");

    // Approvals only, until the device says otherwise; the device's choice wins.
    let got = a.request("push.web.preferences.get", json!({"endpoint": ENDPOINT})).await.unwrap();
    assert_eq!(got["effective"]["categories"]["approvalRequested"], json!(true));
    assert_eq!(got["effective"]["categories"]["agentQuestion"], json!(false));
    let prefs = json!({"enabled": true, "label": "", "categories": {"approvalRequested": false, "agentQuestion": true, "agentFinished": true, "backgroundTaskFailed": false, "scheduledTaskFailed": false}});
    a.request("push.web.preferences.set", json!({"endpoint": ENDPOINT, "scope": "device", "preferences": prefs})).await.unwrap();
    let got = a.request("push.web.preferences.get", json!({"endpoint": ENDPOINT})).await.unwrap();
    assert_eq!(got["effective"]["categories"]["agentQuestion"], json!(true));
    assert_eq!(got["effective"]["categories"]["approvalRequested"], json!(false));
    let e = a.request("push.web.preferences.set", json!({"endpoint": ENDPOINT, "scope": "user", "preferences": prefs})).await.unwrap_err();
    assert_eq!(e.message, "user defaults require a durable authenticated profile");

    // Another device neither reads, changes nor removes it; taking the endpoint over needs its keys.
    let mut b = browser(&gw, 2).await;
    for method in ["push.web.preferences.get", "push.web.unsubscribe"] {
        let e = b.request(method, json!({"endpoint": ENDPOINT})).await.unwrap_err();
        assert_eq!((e.code.as_str(), e.message.as_str()), ("FORBIDDEN", "subscription is not bound to this device"), "{method}");
    }
    let other = json!({"p256dh": keys()["p256dh"], "auth": protocol::device::encode_b64url(&[1u8; 16])});
    let e = b.request("push.web.subscribe", json!({"endpoint": ENDPOINT, "keys": other})).await.unwrap_err();
    assert_eq!(e.message, "existing browser subscription keys required; reconnect from the owning browser");

    assert_eq!(a.request("push.web.unsubscribe", json!({"endpoint": ENDPOINT})).await.unwrap(), json!({"removed": true}));
    let e = a.request("push.web.test", json!({})).await.unwrap_err();
    assert_eq!(e.message, "no web push subscriptions registered");
}
