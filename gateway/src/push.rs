//! Web Push (`push.web.*`), as the real gateway 2026.9.6 has it
//! (`docs/conversation-tools-protocol-notes.md`, "Web Push"): a browser subscribes its push
//! service's endpoint with this gateway's VAPID key; the gateway sends it an encrypted
//! notification (RFC 8291, `aes128gcm`) when an approval or a question waits, when a reply is
//! finished, and when a background task failed, as the device's preferences ask.
//!
//! One subscription per endpoint, bound to the paired device that made it and to the scopes it
//! had then: a notification goes only where that device may see what it names. The VAPID key
//! is made once and kept in the store. The payload says no more than the real gateway's
//! (`protocol::push`): never a command, never a secret.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use protocol::error::{ErrorShape, code};
use protocol::methods::scope;
use protocol::push::{Categories, DevicePreferences, PushPayload};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::Gateway;
use crate::hub::Caller;

/// Where the VAPID key is kept (`machine_state`), the real gateway's name for it.
const VAPID_STATE_KEY: &str = "webPush.vapidKeys";
/// The VAPID token's contact (`sub`).
const VAPID_SUBJECT: &str = "mailto:control-ui@localhost";
const MAX_ENDPOINT: usize = 2048;
const MAX_KEY: usize = 512;
/// How long a push service may take to answer.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionKeys {
    p256dh: String,
    auth: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubscribeParams {
    endpoint: String,
    keys: SubscriptionKeys,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointParams {
    endpoint: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestParams {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    body: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreferencesSetParams {
    endpoint: String,
    scope: String,
    preferences: Value,
}

/// What a notification is about, for the device's categories and the scopes it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Category {
    Approval,
    Question,
    Finished,
    TaskFailed,
}

impl Category {
    fn wanted(self, c: &Categories) -> bool {
        match self {
            Category::Approval => c.approval_requested,
            Category::Question => c.agent_question,
            Category::Finished => c.agent_finished,
            Category::TaskFailed => c.background_task_failed,
        }
    }

    /// The scopes the subscribing device needs (each, or admin) to be told of it.
    fn scopes(self) -> &'static [&'static str] {
        match self {
            Category::Approval => &[scope::APPROVALS, scope::READ],
            Category::Question => &[scope::QUESTIONS, scope::READ],
            Category::Finished | Category::TaskFailed => &[scope::READ],
        }
    }
}

/// A browser's Web Push subscription (`push.web.subscribe`).
#[derive(Debug, Clone, PartialEq)]
pub struct PushSubscriptionRow {
    pub endpoint: String,
    pub subscription_id: String,
    pub p256dh: String,
    pub auth: String,
    pub device_id: String,
    /// The scopes of the connection that subscribed, comma-separated.
    pub scopes: String,
    /// `push.web.preferences.set {scope: "device"}`'s preferences, as JSON.
    pub preferences: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

/// The endpoints each pending approval's notification went to, for its update.
#[derive(Default)]
pub struct Push {
    approval_receipts: Mutex<HashMap<String, Vec<String>>>,
}

fn invalid(method: &str, at: &str, what: &str) -> ErrorShape {
    ErrorShape::invalid(format!("invalid {method} params: at /{at}: {what}"))
}

fn store_error(e: rusqlite::Error) -> ErrorShape {
    ErrorShape::new(code::UNAVAILABLE, format!("web push store: {e}"))
}

fn check_endpoint(method: &str, endpoint: &str) -> Result<(), ErrorShape> {
    if endpoint.is_empty() || endpoint.chars().count() > MAX_ENDPOINT {
        return Err(invalid(method, "endpoint", "must be a string of 1 to 2048 characters"));
    }
    if !endpoint.starts_with("https://") {
        return Err(invalid(method, "endpoint", "must match pattern \"^https://\""));
    }
    if endpoint.parse::<http::Uri>().ok().and_then(|u| u.host().map(str::to_string)).is_none() {
        return Err(ErrorShape::new(code::UNAVAILABLE, "invalid push subscription endpoint: must be an HTTPS URL under 2048 chars"));
    }
    Ok(())
}

/// The VAPID signing key, made on first use and kept.
fn vapid_key(gw: &Gateway) -> Result<SigningKey, ErrorShape> {
    let stored = gw
        .store
        .machine_state_or(VAPID_STATE_KEY, || {
            // 32 random bytes are a valid scalar but for odds of about 2^-32: drawn again then.
            let key = std::iter::repeat_with(|| SigningKey::from_bytes(&crate::util::random_bytes::<32>().into()))
                .find_map(Result::ok)
                .expect("random scalars");
            protocol::device::encode_b64url(&key.to_bytes())
        })
        .map_err(store_error)?;
    protocol::device::decode_b64url(&stored)
        .and_then(|b| SigningKey::from_slice(&b).ok())
        .ok_or_else(|| ErrorShape::new(code::UNAVAILABLE, "the stored VAPID key is unreadable"))
}

fn public_key_b64(key: &SigningKey) -> String {
    protocol::device::encode_b64url(key.verifying_key().to_encoded_point(false).as_bytes())
}

/// `push.web.vapidPublicKey {}` → `{vapidPublicKey}`.
pub fn vapid_public_key(gw: &Gateway) -> Result<Value, ErrorShape> {
    Ok(json!({"vapidPublicKey": public_key_b64(&vapid_key(gw)?)}))
}

fn decode_keys(keys: &SubscriptionKeys) -> Result<(p256::PublicKey, web_push_native::Auth), String> {
    let public = protocol::device::decode_b64url(&keys.p256dh)
        .and_then(|b| p256::PublicKey::from_sec1_bytes(&b).ok())
        .ok_or("p256dh is not a P-256 public key")?;
    let auth = protocol::device::decode_b64url(&keys.auth).filter(|b| b.len() == 16).ok_or("auth is not 16 bytes of base64url")?;
    Ok((public, web_push_native::Auth::clone_from_slice(&auth)))
}

/// `push.web.subscribe {endpoint, keys: {p256dh, auth}}` → `{subscriptionId}`. The same
/// endpoint again updates its row (and keeps its id); another device takes it over only with
/// the same keys (it is the same browser), and its preferences start over.
pub fn subscribe(gw: &Gateway, caller: &Caller<'_>, p: SubscribeParams) -> Result<Value, ErrorShape> {
    const M: &str = protocol::methods::method::PUSH_SUBSCRIBE;
    check_endpoint(M, &p.endpoint)?;
    for (at, v) in [("keys/p256dh", &p.keys.p256dh), ("keys/auth", &p.keys.auth)] {
        if v.is_empty() || v.len() > MAX_KEY {
            return Err(invalid(M, at, "must be a string of 1 to 512 characters"));
        }
    }
    let Some(device_id) = caller.peer.device_id.clone() else {
        return Err(ErrorShape::invalid("paired browser device identity required"));
    };
    decode_keys(&p.keys).map_err(|e| ErrorShape::new(code::UNAVAILABLE, format!("invalid push subscription keys: {e}")))?;
    let now = crate::util::now_ms();
    let existing = gw.store.push_subscription(&p.endpoint).map_err(store_error)?;
    let row = match existing {
        Some(old) if old.device_id == device_id => PushSubscriptionRow {
            p256dh: p.keys.p256dh,
            auth: p.keys.auth,
            scopes: caller.peer.scopes.join(","),
            updated_at_ms: now,
            ..old
        },
        Some(old) if old.p256dh != p.keys.p256dh || old.auth != p.keys.auth => {
            return Err(ErrorShape::new(code::FORBIDDEN, "existing browser subscription keys required; reconnect from the owning browser"));
        }
        Some(old) => PushSubscriptionRow { device_id, scopes: caller.peer.scopes.join(","), preferences: None, updated_at_ms: now, ..old },
        None => PushSubscriptionRow {
            endpoint: p.endpoint,
            subscription_id: crate::util::uuid_v4(),
            p256dh: p.keys.p256dh,
            auth: p.keys.auth,
            device_id,
            scopes: caller.peer.scopes.join(","),
            preferences: None,
            created_at_ms: now,
            updated_at_ms: now,
        },
    };
    gw.store.put_push_subscription(&row).map_err(store_error)?;
    Ok(json!({"subscriptionId": row.subscription_id}))
}

/// The caller's own subscription of `endpoint`.
fn own(gw: &Gateway, caller: &Caller<'_>, method: &str, endpoint: &str) -> Result<PushSubscriptionRow, ErrorShape> {
    check_endpoint(method, endpoint)?;
    match gw.store.push_subscription(endpoint).map_err(store_error)? {
        Some(row) if caller.peer.device_id.as_deref() == Some(row.device_id.as_str()) => Ok(row),
        _ => Err(ErrorShape::new(code::FORBIDDEN, "subscription is not bound to this device")),
    }
}

/// `push.web.unsubscribe {endpoint}` → `{removed: true}`.
pub fn unsubscribe(gw: &Gateway, caller: &Caller<'_>, p: EndpointParams) -> Result<Value, ErrorShape> {
    own(gw, caller, protocol::methods::method::PUSH_UNSUBSCRIBE, &p.endpoint)?;
    gw.store.delete_push_subscription(&p.endpoint).map_err(store_error)?;
    Ok(json!({"removed": true}))
}

fn device_preferences(row: &PushSubscriptionRow) -> DevicePreferences {
    row.preferences.as_deref().and_then(|p| serde_json::from_str(p).ok()).unwrap_or(DevicePreferences {
        enabled: true,
        label: String::new(),
        categories: None,
    })
}

fn user_defaults() -> Value {
    json!({
        "categories": {"approvalRequested": true, "agentFinished": false, "agentQuestion": false, "humanMentioned": false,
            "scheduledTaskFailed": false, "backgroundTaskFailed": false},
        "detailLevel": "private",
        "quietHours": {"enabled": false, "startMinute": 1320, "endMinute": 420, "timeZone": "UTC"},
        "agentIds": [],
    })
}

/// The user's defaults with the device's overrides, the real gateway's `effective`.
fn effective(device: &DevicePreferences) -> Value {
    let mut out = user_defaults();
    if let Some(c) = &device.categories {
        if let (Some(into), Value::Object(from)) = (out["categories"].as_object_mut(), json!(c)) {
            into.extend(from);
        }
    }
    out
}

fn effective_categories(row: &PushSubscriptionRow) -> Option<Categories> {
    let device = device_preferences(row);
    device.enabled.then(|| serde_json::from_value(effective(&device)["categories"].clone()).ok()).flatten()
}

/// `push.web.preferences.get {endpoint}` → `{durableIdentity, user, device, effective}`.
pub fn preferences_get(gw: &Gateway, caller: &Caller<'_>, p: EndpointParams) -> Result<Value, ErrorShape> {
    let row = own(gw, caller, protocol::methods::method::PUSH_PREFERENCES_GET, &p.endpoint)?;
    let device = device_preferences(&row);
    Ok(json!({"durableIdentity": false, "user": user_defaults(), "device": device, "effective": effective(&device)}))
}

/// `push.web.preferences.set {endpoint, scope: "device", preferences}` → `{scope, preferences}`.
/// This gateway has no user profiles: `scope: "user"` is refused as the real gateway refuses it
/// without one.
pub fn preferences_set(gw: &Gateway, caller: &Caller<'_>, p: PreferencesSetParams) -> Result<Value, ErrorShape> {
    const M: &str = protocol::methods::method::PUSH_PREFERENCES_SET;
    match p.scope.as_str() {
        "device" => {}
        "user" => return Err(ErrorShape::invalid("user defaults require a durable authenticated profile")),
        _ => return Err(invalid(M, "scope", "must be equal to one of the allowed values")),
    }
    let prefs: DevicePreferences = protocol::closed::from_value_closed(p.preferences)
        .map_err(|e| ErrorShape::invalid(format!("invalid {M} params: at /preferences: {e}")))?;
    if prefs.label.chars().count() > 80 {
        return Err(invalid(M, "preferences/label", "must not have more than 80 characters"));
    }
    let mut row = own(gw, caller, M, &p.endpoint)?;
    row.preferences = Some(serde_json::to_string(&prefs).unwrap_or_default());
    row.updated_at_ms = crate::util::now_ms();
    gw.store.put_push_subscription(&row).map_err(store_error)?;
    Ok(json!({"scope": "device", "preferences": prefs}))
}

/// `push.web.test {title?, body?}` → `{results}`: to every subscription, whatever its
/// preferences (as the real gateway does).
pub async fn test(gw: &Arc<Gateway>, p: TestParams) -> Result<Value, ErrorShape> {
    let rows = gw.store.push_subscriptions().map_err(store_error)?;
    if rows.is_empty() {
        return Err(ErrorShape::invalid("no web push subscriptions registered"));
    }
    let payload = PushPayload {
        title: p.title.unwrap_or_else(|| protocol::push::TEST_TITLE.into()),
        body: p.body.unwrap_or_else(|| protocol::push::TEST_BODY.into()),
        tag: "openclaw-test".into(),
        renotify: false,
        url: String::new(),
        choices: None,
        secret: false,
    };
    let mut results = Vec::new();
    for row in rows {
        results.push(match deliver(gw, &row, &payload, Delivery::default()).await {
            Ok(status) => json!({"ok": true, "subscriptionId": row.subscription_id, "statusCode": status}),
            Err(e) => json!({"ok": false, "subscriptionId": row.subscription_id, "statusCode": e.status, "error": e.message}),
        });
    }
    if results.iter().all(|r| r["ok"] == false) {
        let mut e = ErrorShape::new(code::UNAVAILABLE, "all web push deliveries failed");
        e.details = Some(json!({"results": results}));
        return Err(e);
    }
    Ok(json!({"results": results}))
}

/// The push service's handling of one message (RFC 8030).
struct Delivery {
    ttl_s: u64,
    urgency: &'static str,
    /// Replaces an undelivered message of the same topic.
    topic: Option<String>,
}

impl Default for Delivery {
    fn default() -> Self {
        Delivery { ttl_s: 2_419_200, urgency: "normal", topic: None }
    }
}

fn topic(tag: &str) -> String {
    use sha2::{Digest, Sha256};
    protocol::device::encode_b64url(&Sha256::digest(tag.as_bytes()))[..32].to_string()
}

struct Failed {
    status: Option<u16>,
    message: String,
}

/// Encrypts `payload` for `row` and posts it to its push service, with this gateway's VAPID
/// token. A 404 or 410 means the subscription is gone: it is removed.
async fn deliver(gw: &Arc<Gateway>, row: &PushSubscriptionRow, payload: &PushPayload, d: Delivery) -> Result<u16, Failed> {
    let fail = |message: String| Failed { status: None, message };
    let (public, auth) =
        decode_keys(&SubscriptionKeys { p256dh: row.p256dh.clone(), auth: row.auth.clone() }).map_err(|e| fail(e.to_string()))?;
    let body = serde_json::to_vec(payload).unwrap_or_default();
    let encrypted = web_push_native::encrypt(body, &public, &auth).map_err(|e| fail(format!("encryption failed: {e}")))?;
    let uri: http::Uri = row.endpoint.parse().map_err(|_| fail("the endpoint is not a URL".into()))?;
    let key = vapid_key(gw).map_err(|e| fail(e.message))?;
    // Origin-form (`/path?query`), with the push service's host in `Host`, as a browser's push
    // service expects.
    let target = uri.path_and_query().map_or("/", |p| p.as_str()).to_string();
    let mut request = http::Request::post(target)
        .header(http::header::HOST, uri.authority().map(|a| a.as_str()).unwrap_or_default())
        .header("TTL", d.ttl_s)
        .header("Urgency", d.urgency)
        .header(http::header::CONTENT_ENCODING, "aes128gcm")
        .header(http::header::CONTENT_TYPE, "application/octet-stream")
        .header(http::header::AUTHORIZATION, vapid_authorization(&key, &uri));
    if let Some(t) = d.topic {
        request = request.header("Topic", t);
    }
    let request = request.body(Full::new(Bytes::from(encrypted))).map_err(|e| fail(e.to_string()))?;
    let status = tokio::time::timeout(SEND_TIMEOUT, post(&gw.config.push_extra_ca, uri, request))
        .await
        .map_err(|_| fail("the push service did not answer in time".into()))?
        .map_err(fail)?;
    if status == 404 || status == 410 {
        let _ = gw.store.delete_push_subscription(&row.endpoint);
    }
    if (200..300).contains(&status) {
        Ok(status)
    } else {
        Err(Failed { status: Some(status), message: format!("the push service answered HTTP {status}") })
    }
}

/// `vapid t=<JWT>, k=<public key>` (RFC 8292): the token's audience is the push service's
/// origin, valid 12 hours.
fn vapid_authorization(key: &SigningKey, uri: &http::Uri) -> String {
    let b64 = protocol::device::encode_b64url;
    // The push service's origin: scheme, host and a port other than 443 (no user info).
    let port = uri.port_u16().filter(|p| *p != 443).map(|p| format!(":{p}")).unwrap_or_default();
    let audience = format!("{}://{}{port}", uri.scheme_str().unwrap_or("https"), uri.host().unwrap_or_default());
    let exp = crate::util::now_ms() / 1000 + 12 * 3600;
    let header = b64(br#"{"typ":"JWT","alg":"ES256"}"#);
    let claims = b64(json!({"aud": audience, "exp": exp, "sub": VAPID_SUBJECT}).to_string().as_bytes());
    let signed = format!("{header}.{claims}");
    let signature: Signature = key.sign(signed.as_bytes());
    format!("vapid t={signed}.{}, k={}", b64(&signature.to_bytes()), public_key_b64(key))
}

/// One HTTPS request over a fresh connection, trusting the system's roots (and `extra_ca`,
/// a PEM file, when configured).
async fn post(extra_ca: &Option<std::path::PathBuf>, uri: http::Uri, request: http::Request<Full<Bytes>>) -> Result<u16, String> {
    let host = uri.host().ok_or("the endpoint has no host")?.trim_start_matches('[').trim_end_matches(']').to_string();
    let port = uri.port_u16().unwrap_or(443);
    let mut tls = native_tls::TlsConnector::builder();
    if let Some(path) = extra_ca {
        let pem = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        tls.add_root_certificate(native_tls::Certificate::from_pem(&pem).map_err(|e| format!("{}: {e}", path.display()))?);
    }
    let tls = tokio_native_tls::TlsConnector::from(tls.build().map_err(|e| e.to_string())?);
    let tcp = tokio::net::TcpStream::connect((host.as_str(), port)).await.map_err(|e| format!("cannot reach the push service: {e}"))?;
    let stream = tls.connect(&host, tcp).await.map_err(|e| format!("TLS with the push service failed: {e}"))?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await.map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let response = sender.send_request(request).await.map_err(|e| format!("the push service failed: {e}"))?;
    Ok(response.status().as_u16())
}

fn has_scopes(row: &PushSubscriptionRow, needed: &[&str]) -> bool {
    let held: Vec<&str> = row.scopes.split(',').collect();
    held.contains(&scope::ADMIN) || needed.iter().all(|n| held.contains(n))
}

/// The subscriptions that want `category` and may see it: their device still paired and not
/// revoked, with the scopes it needs.
fn targets(gw: &Gateway, category: Category) -> Vec<PushSubscriptionRow> {
    let rows = gw.store.push_subscriptions().unwrap_or_default();
    rows.into_iter()
        .filter(|r| effective_categories(r).is_some_and(|c| category.wanted(&c)))
        .filter(|r| has_scopes(r, category.scopes()))
        .filter(|r| gw.store.device(&r.device_id).ok().flatten().is_some_and(|d| d.revoked_at_ms.is_none()))
        .collect()
}

fn send_all(gw: &Arc<Gateway>, rows: Vec<PushSubscriptionRow>, payload: PushPayload, delivery: impl Fn() -> Delivery + Send + 'static) {
    if rows.is_empty() {
        return;
    }
    let gw = gw.clone();
    tokio::spawn(async move {
        for row in rows {
            if let Err(e) = deliver(&gw, &row, &payload, delivery()).await {
                crate::log::warn(&format!("web push to subscription {} failed: {}", row.subscription_id, e.message));
            }
        }
    });
}

/// An approval waits: its generic notification, to devices that want approvals.
pub fn approval_requested(gw: &Arc<Gateway>, id: &str, expires_at_ms: i64) {
    let rows = targets(gw, Category::Approval);
    gw.push
        .approval_receipts
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id.to_string(), rows.iter().map(|r| r.endpoint.clone()).collect());
    let payload = protocol::push::approval_requested(id);
    let ttl_s = ((expires_at_ms - crate::util::now_ms()).max(1000) as u64).div_ceil(1000);
    let t = topic(&format!("openclaw-approval:{id}"));
    send_all(gw, rows, payload, move || Delivery { ttl_s, urgency: "high", topic: Some(t.clone()) });
}

/// An approval was decided or expired: its notification is replaced where it went.
pub fn approval_updated(gw: &Arc<Gateway>, id: &str) {
    let Some(sent) = gw.push.approval_receipts.lock().unwrap_or_else(|p| p.into_inner()).remove(id) else { return };
    let rows: Vec<PushSubscriptionRow> = sent.iter().filter_map(|e| gw.store.push_subscription(e).ok().flatten()).collect();
    let t = topic(&format!("openclaw-approval:{id}"));
    send_all(gw, rows, protocol::push::approval_updated(id), move || Delivery { ttl_s: 300, urgency: "normal", topic: Some(t.clone()) });
}

/// A question waits.
pub fn question_requested(gw: &Arc<Gateway>, record: &protocol::question::QuestionRecord) {
    let payload = protocol::push::question_requested(&record.id, &record.questions);
    let t = topic(&payload.tag);
    send_all(gw, targets(gw, Category::Question), payload, move || Delivery { ttl_s: 300, urgency: "normal", topic: Some(t.clone()) });
}

/// A run ended with its reply.
pub fn run_finished(gw: &Arc<Gateway>, run_id: &str, session_key: &str) {
    let payload = protocol::push::run_finished(run_id, session_key);
    send_all(gw, targets(gw, Category::Finished), payload, || Delivery { ttl_s: 300, urgency: "normal", topic: None });
}

/// A background task failed or timed out.
pub fn task_failed(gw: &Arc<Gateway>, task_id: &str, session_key: &str) {
    let payload = protocol::push::task_failed(task_id, session_key);
    send_all(gw, targets(gw, Category::TaskFailed), payload, || Delivery { ttl_s: 300, urgency: "high", topic: None });
}
