//! The browser's Ed25519 device identity, the device token the gateway issues to it (both in
//! `localStorage`), and the shared gateway token (only ever in `sessionStorage`, per tab and
//! gateway URL).
//!
//! Keys, signatures and the id's SHA-256 come from the browser's WebCrypto (`SubtleCrypto`
//! Ed25519), not from Rust crypto compiled into the bundle: the same bytes as the gateway's
//! Rust implementation (pinned by `protocol::device::vector`), at a fraction of the wasm.

use js_sys::{Array, Object, Reflect, Uint8Array};
use serde::{Deserialize, Serialize};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{CryptoKey, SubtleCrypto};

use crate::io::browser;

const IDENTITY_KEY: &str = "ocui.device.v1";
const ED25519: &str = "Ed25519";
/// PKCS #8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410): this prefix, then the seed.
const PKCS8_SEED_PREFIX: [u8; 16] = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredIdentity {
    version: u32,
    seed: String,
    device_id: String,
    created_at_ms: f64,
}

/// The device key pair, held by WebCrypto, with its public key and id worked out once.
#[derive(Clone)]
pub struct DeviceIdentity {
    key: CryptoKey,
    device_id: String,
    public_key_b64: String,
}

fn subtle() -> Result<SubtleCrypto, String> {
    let crypto = web_sys::window().ok_or("no window")?.crypto().map_err(|_| "this browser has no WebCrypto".to_string())?;
    Ok(crypto.subtle())
}

fn js_error(what: &str, e: JsValue) -> String {
    let why = e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).or_else(|| e.as_string()).unwrap_or_default();
    format!("{what} failed in WebCrypto: {why}")
}

async fn settle(what: &str, promise: Result<js_sys::Promise, JsValue>) -> Result<JsValue, String> {
    JsFuture::from(promise.map_err(|e| js_error(what, e))?).await.map_err(|e| js_error(what, e))
}

fn bytes(buffer: &JsValue) -> Vec<u8> {
    Uint8Array::new(buffer).to_vec()
}

fn usages(list: &[&str]) -> JsValue {
    list.iter().map(|u| JsValue::from_str(u)).collect::<Array>().into()
}

impl DeviceIdentity {
    /// The identity whose private key is `seed` (Ed25519 keys are their 32-byte seed).
    pub async fn from_seed(seed: &[u8; 32]) -> Result<DeviceIdentity, String> {
        let subtle = subtle()?;
        let mut pkcs8 = PKCS8_SEED_PREFIX.to_vec();
        pkcs8.extend_from_slice(seed);
        let data: Object = Uint8Array::from(pkcs8.as_slice()).into();
        // Extractable only so the JWK export below can read the public key (`x`) WebCrypto
        // derived; the seed itself is already in our storage.
        let key: CryptoKey =
            settle("importing the device key", subtle.import_key_with_str("pkcs8", &data, ED25519, true, &usages(&["sign"])))
                .await?
                .unchecked_into();
        let jwk = settle("reading the device public key", subtle.export_key("jwk", &key)).await?;
        let public_key_b64 =
            Reflect::get(&jwk, &JsValue::from_str("x")).ok().and_then(|x| x.as_string()).ok_or("WebCrypto gave no Ed25519 public key")?;
        let public_key = protocol::device::decode_b64url(&public_key_b64)
            .filter(|k| k.len() == 32)
            .ok_or("WebCrypto gave a malformed Ed25519 public key")?;
        let digest = settle("hashing the device public key", subtle.digest_with_str_and_u8_array("SHA-256", &public_key)).await?;
        Ok(DeviceIdentity { key, device_id: protocol::device::device_id_from_digest(&bytes(&digest)), public_key_b64 })
    }

    /// A new random identity; returns it with its seed (for storage).
    async fn generate() -> Result<(DeviceIdentity, [u8; 32]), String> {
        let subtle = subtle()?;
        let pair = settle("creating a device key", subtle.generate_key_with_str(ED25519, true, &usages(&["sign", "verify"]))).await?;
        let private: CryptoKey =
            Reflect::get(&pair, &JsValue::from_str("privateKey")).map_err(|e| js_error("creating a device key", e))?.unchecked_into();
        let pkcs8 = bytes(&settle("exporting the device key", subtle.export_key("pkcs8", &private)).await?);
        let seed: [u8; 32] = pkcs8
            .strip_prefix(&PKCS8_SEED_PREFIX[..])
            .and_then(|s| <[u8; 32]>::try_from(s).ok())
            .ok_or("WebCrypto exported an Ed25519 key in an unexpected form")?;
        Ok((DeviceIdentity::from_seed(&seed).await?, seed))
    }

    pub fn device_id(&self) -> String {
        self.device_id.clone()
    }

    pub fn public_key_b64(&self) -> String {
        self.public_key_b64.clone()
    }

    /// The Ed25519 signature of `payload`, base64url.
    pub async fn sign_b64(&self, payload: &str) -> Result<String, String> {
        let sig =
            settle("signing the connect request", subtle()?.sign_with_str_and_u8_array(ED25519, &self.key, payload.as_bytes())).await?;
        Ok(protocol::device::encode_b64url(&bytes(&sig)))
    }
}

/// Loads the identity, or creates and stores one. If storage is unavailable the identity
/// lives for this page only (the gateway then sees a new device after a reload).
pub async fn load_or_create() -> Result<DeviceIdentity, String> {
    // Read and written as typed JSON, not through `io::json`'s `Value`: the early module, which
    // loads the identity too, then carries no `Value` parser at all.
    if let Some(stored) = browser::local_get(IDENTITY_KEY).and_then(|s| serde_json::from_str::<StoredIdentity>(&s).ok()) {
        if let Some(seed) = protocol::device::decode_b64url(&stored.seed).and_then(|b| <[u8; 32]>::try_from(b).ok()) {
            let id = DeviceIdentity::from_seed(&seed).await?;
            if id.device_id == stored.device_id {
                return Ok(id);
            }
        }
        browser::log_warn("stored device identity was damaged; creating a new one");
    }
    let (id, seed) = DeviceIdentity::generate().await?;
    let stored = StoredIdentity {
        version: 1,
        seed: protocol::device::encode_b64url(&seed),
        device_id: id.device_id(),
        created_at_ms: browser::now_ms(),
    };
    if !browser::local_set(IDENTITY_KEY, &serde_json::to_string(&stored).unwrap_or_default()) {
        browser::log_warn("could not store the device identity; it lasts for this page only");
    }
    Ok(id)
}

fn device_token_key(device_id: &str, gateway_url: &str) -> String {
    format!("ocui.deviceToken.v1:{device_id}:{gateway_url}:operator")
}

pub fn device_token(device_id: &str, gateway_url: &str) -> Option<String> {
    browser::local_get(&device_token_key(device_id, gateway_url)).filter(|t| !t.is_empty())
}

pub fn store_device_token(device_id: &str, gateway_url: &str, token: &str) {
    browser::local_set(&device_token_key(device_id, gateway_url), token);
}

/// Every token this browser holds, for the credential guard: this tab's shared tokens for
/// every gateway (`ocui.token.v1:*`) and every device token (`ocui.deviceToken.v1:*`), with
/// `also` (the ones in use now). Memory only, through `model::credential::set_own_secrets`.
pub fn guard_held_tokens(also: &[&str]) {
    let stored =
        browser::session_keys().into_iter().filter(|k| k.starts_with("ocui.token.v1:")).filter_map(|k| browser::session_get(&k)).chain(
            browser::local_keys().into_iter().filter(|k| k.starts_with("ocui.deviceToken.v1:")).filter_map(|k| browser::local_get(&k)),
        );
    let mut held: Vec<String> = Vec::new();
    for t in also.iter().map(|s| s.to_string()).chain(stored) {
        if !t.trim().is_empty() && !held.contains(&t) {
            held.push(t);
        }
    }
    model::credential::set_own_secrets(&held);
}

fn identity_hold_key(gateway_url: &str) -> String {
    format!("ocui.identityHold.v1:{gateway_url}")
}

/// Whether what is queued for `gateway_url` waits for the person, because the gateway there
/// looked like another one (`model::connection::gateway_changed`). Kept across reloads.
pub fn identity_hold(gateway_url: &str) -> bool {
    browser::local_get(&identity_hold_key(gateway_url)).is_some()
}

pub fn set_identity_hold(gateway_url: &str, held: bool) {
    if held {
        browser::local_set(&identity_hold_key(gateway_url), "1");
    } else {
        browser::local_remove(&identity_hold_key(gateway_url));
    }
}

fn token_key(gateway_url: &str) -> String {
    format!("ocui.token.v1:{gateway_url}")
}

/// The shared gateway token for this tab. Never written to `localStorage`.
pub fn session_token(gateway_url: &str) -> Option<String> {
    browser::session_get(&token_key(gateway_url)).filter(|t| !t.is_empty())
}

pub fn set_session_token(gateway_url: &str, token: Option<&str>) {
    match token {
        Some(t) if !t.is_empty() => {
            browser::session_set(&token_key(gateway_url), t);
        }
        _ => browser::session_remove(&token_key(gateway_url)),
    }
}

const CHOSEN_GATEWAY_KEY: &str = "ocui.gatewayUrl.v1";

/// The gateway this tab was pointed at by a click (a link's **Switch** or the connection form),
/// kept for reloads of this tab only. Never set by a link alone.
pub fn chosen_gateway() -> Option<String> {
    browser::session_get(CHOSEN_GATEWAY_KEY).filter(|u| !u.is_empty())
}

pub fn set_chosen_gateway(url: Option<&str>) {
    match url {
        Some(u) if !u.is_empty() => {
            browser::session_set(CHOSEN_GATEWAY_KEY, u);
        }
        _ => browser::session_remove(CHOSEN_GATEWAY_KEY),
    }
}
