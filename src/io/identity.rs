//! The browser's Ed25519 device identity, one per gateway, in that gateway's IndexedDB
//! database (`io::key_store`); the device token each gateway issues to it (`localStorage`); and
//! the shared gateway token (only ever in `sessionStorage`, per tab and gateway URL).
//!
//! Keys, signatures and the id's SHA-256 come from the browser's WebCrypto (`SubtleCrypto`
//! Ed25519), not from Rust crypto compiled into the bundle: the same bytes as the gateway's
//! Rust implementation (pinned by `protocol::device::vector`), at a fraction of the wasm. The
//! private key is non-extractable: WebCrypto signs with it, and nothing can read it back.
//!
//! Earlier builds kept one key for every gateway, its seed in `localStorage` (`ocui.device.v1`).
//! A gateway that knew that device keeps it (sealed into its own store on its first start), so
//! its pairing holds; a gateway it never met gets a key of its own. The seed is removed once
//! every gateway this browser knows has its key.

use js_sys::{Array, Object, Reflect, Uint8Array};
use serde::{Deserialize, Serialize};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{CryptoKey, SubtleCrypto};

use crate::io::browser;
use crate::io::key_store::{self, Added, KeyRecord, Stored};

/// Where earlier builds kept the one device key of this browser.
const LEGACY_IDENTITY_KEY: &str = "ocui.device.v1";
const DEVICE_TOKEN_PREFIX: &str = "ocui.deviceToken.v1:";
const ED25519: &str = "Ed25519";
/// PKCS #8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410): this prefix, then the seed.
const PKCS8_SEED_PREFIX: [u8; 16] = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

/// The one identity of earlier builds, as they stored it.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LegacyIdentity {
    version: u32,
    seed: String,
    device_id: String,
    created_at_ms: f64,
    /// The gateways (normalised addresses) whose store now holds their key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    settled: Vec<String>,
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

async fn device_id_of(public_key: &[u8]) -> Result<String, String> {
    let digest = settle("hashing the device public key", subtle()?.digest_with_str_and_u8_array("SHA-256", public_key)).await?;
    Ok(protocol::device::device_id_from_digest(&bytes(&digest)))
}

impl DeviceIdentity {
    /// The identity whose private key is `seed` (Ed25519 keys are their 32-byte seed). The key
    /// WebCrypto keeps is non-extractable.
    pub async fn from_seed(seed: &[u8; 32]) -> Result<DeviceIdentity, String> {
        let subtle = subtle()?;
        let mut pkcs8 = PKCS8_SEED_PREFIX.to_vec();
        pkcs8.extend_from_slice(seed);
        let data: Object = Uint8Array::from(pkcs8.as_slice()).into();
        // WebCrypto derives the public key only into an extractable key's JWK export (`x`):
        // that key reads it and is dropped; the one kept is imported again, sealed.
        let open: CryptoKey =
            settle("importing the device key", subtle.import_key_with_str("pkcs8", &data, ED25519, true, &usages(&["sign"])))
                .await?
                .unchecked_into();
        let jwk = settle("reading the device public key", subtle.export_key("jwk", &open)).await?;
        let public_key_b64 =
            Reflect::get(&jwk, &JsValue::from_str("x")).ok().and_then(|x| x.as_string()).ok_or("WebCrypto gave no Ed25519 public key")?;
        let public_key = protocol::device::decode_b64url(&public_key_b64)
            .filter(|k| k.len() == 32)
            .ok_or("WebCrypto gave a malformed Ed25519 public key")?;
        let key: CryptoKey =
            settle("sealing the device key", subtle.import_key_with_str("pkcs8", &data, ED25519, false, &usages(&["sign"])))
                .await?
                .unchecked_into();
        Ok(DeviceIdentity { key, device_id: device_id_of(&public_key).await?, public_key_b64 })
    }

    /// A new random identity whose private key never leaves WebCrypto.
    async fn generate() -> Result<DeviceIdentity, String> {
        let subtle = subtle()?;
        let pair = settle("creating a device key", subtle.generate_key_with_str(ED25519, false, &usages(&["sign", "verify"]))).await?;
        let part = |name: &str| -> Result<CryptoKey, String> {
            Ok(Reflect::get(&pair, &JsValue::from_str(name)).map_err(|e| js_error("creating a device key", e))?.unchecked_into())
        };
        let (key, public) = (part("privateKey")?, part("publicKey")?);
        // A public key is always extractable, whatever the pair was made as.
        let public_key = bytes(&settle("reading the device public key", subtle.export_key("raw", &public)).await?);
        if public_key.len() != 32 {
            return Err("WebCrypto gave a malformed Ed25519 public key".into());
        }
        Ok(DeviceIdentity {
            key,
            device_id: device_id_of(&public_key).await?,
            public_key_b64: protocol::device::encode_b64url(&public_key),
        })
    }

    /// The identity a store kept, if it is whole: a private key WebCrypto can sign with, and an
    /// id that is its public key's.
    async fn from_record(record: KeyRecord) -> Option<DeviceIdentity> {
        let public_key = protocol::device::decode_b64url(&record.public_key_b64).filter(|k| k.len() == 32)?;
        let whole = Reflect::get(&record.private_key, &"type".into()).ok().and_then(|t| t.as_string()).as_deref() == Some("private")
            && device_id_of(&public_key).await.ok()? == record.device_id;
        whole.then_some(DeviceIdentity { key: record.private_key, device_id: record.device_id, public_key_b64: record.public_key_b64 })
    }

    fn record(&self) -> KeyRecord {
        KeyRecord {
            device_id: self.device_id.clone(),
            public_key_b64: self.public_key_b64.clone(),
            private_key: self.key.clone(),
            created_at_ms: browser::now_ms(),
        }
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

/// Loads `gateway_url`'s device identity from its store, or creates and stores one. If its
/// store cannot be opened or written, the identity lives for this page only (the gateway then
/// sees a new device after a reload), or is the earlier builds' one when this browser has it.
pub async fn load_or_create(gateway_url: &str) -> Result<DeviceIdentity, String> {
    let identity = load(gateway_url, || legacy_identity(gateway_url)).await;
    if identity.is_ok() {
        settle_legacy(gateway_url);
    }
    identity
}

/// [`load_or_create`] for the page's early module, which stays small: while the earlier
/// builds' identity waits to be moved, it leaves the connect (and the move) to the app.
pub async fn load_or_create_early(gateway_url: &str) -> Result<DeviceIdentity, String> {
    if browser::local_get(LEGACY_IDENTITY_KEY).is_some() {
        return Err("the app moves the earlier device identity first".into());
    }
    load(gateway_url, || async { None }).await
}

/// The identity in `gateway_url`'s store; else `earlier`'s, else a new one, stored there.
async fn load<F: std::future::Future<Output = Option<DeviceIdentity>>>(
    gateway_url: &str,
    earlier: impl FnOnce() -> F,
) -> Result<DeviceIdentity, String> {
    let db_name = crate::io::storage::gateway_db(gateway_url, &browser::own_gateway_url());
    let db = match key_store::open(&db_name).await {
        Ok(db) => db,
        Err(why) => {
            browser::log_warn(&format!("the device key is not kept: {why}"));
            return match earlier().await {
                Some(id) => Ok(id),
                None => DeviceIdentity::generate().await,
            };
        }
    };
    let identity = load_in(&db, earlier).await;
    db.close();
    identity
}

async fn load_in<F: std::future::Future<Output = Option<DeviceIdentity>>>(
    db: &web_sys::IdbDatabase,
    earlier: impl FnOnce() -> F,
) -> Result<DeviceIdentity, String> {
    let damaged = match key_store::read(db).await {
        Ok(Stored::Key(record)) => match DeviceIdentity::from_record(record).await {
            Some(id) => return Ok(id),
            None => true,
        },
        Ok(Stored::Damaged) => true,
        Ok(Stored::Nothing) => false,
        Err(why) => {
            browser::log_warn(&format!("the device key could not be read; this page uses one of its own: {why}"));
            return DeviceIdentity::generate().await;
        }
    };
    if damaged {
        browser::log_warn("the stored device key was damaged; creating a new one");
    }
    let id = match earlier().await {
        Some(id) => id,
        None => DeviceIdentity::generate().await?,
    };
    match key_store::add(db, &id.record(), damaged).await {
        Ok(Added::Added) => Ok(id),
        // The early module or another tab stored one first: one device, not two.
        Ok(Added::AlreadyThere) => match key_store::read(db).await {
            Ok(Stored::Key(record)) => Ok(DeviceIdentity::from_record(record).await.unwrap_or(id)),
            _ => Ok(id),
        },
        Err(why) => {
            browser::log_warn(&format!("could not store the device key; it lasts for this page only: {why}"));
            Ok(id)
        }
    }
}

fn read_legacy() -> Option<LegacyIdentity> {
    browser::local_get(LEGACY_IDENTITY_KEY).and_then(|s| crate::io::json::decode(&s))
}

/// The gateways the earlier builds' device met (normalised): those that issued it a device
/// token, those this browser keeps a store for, and those earlier builds recorded scopes for.
fn gateways_that_met(legacy: &LegacyIdentity) -> Vec<String> {
    let token = format!("{DEVICE_TOKEN_PREFIX}{}:", legacy.device_id);
    let keys = browser::local_keys();
    keys.iter()
        .filter_map(|k| k.strip_prefix(&token).and_then(|rest| rest.strip_suffix(":operator")))
        .map(str::to_string)
        .chain(crate::io::storage::known_gateways().into_iter().map(|k| k.url))
        .chain(crate::io::storage::used_gateway_urls())
        .map(|u| model::url::normalize_gateway_url(&u))
        .collect()
}

/// The earlier builds' identity, when `gateway_url` met it (so its pairing holds).
async fn legacy_identity(gateway_url: &str) -> Option<DeviceIdentity> {
    let legacy = read_legacy()?;
    if !gateways_that_met(&legacy).contains(&model::url::normalize_gateway_url(gateway_url)) {
        return None;
    }
    let seed = protocol::device::decode_b64url(&legacy.seed).and_then(|b| <[u8; 32]>::try_from(b).ok())?;
    match DeviceIdentity::from_seed(&seed).await {
        Ok(id) if id.device_id == legacy.device_id => Some(id),
        _ => {
            browser::log_warn("the earlier device identity was damaged; this gateway gets a new one");
            None
        }
    }
}

/// Records that `gateway_url`'s store holds its key, and removes the earlier builds' seed once
/// every gateway that met it has one.
fn settle_legacy(gateway_url: &str) {
    if browser::local_get(LEGACY_IDENTITY_KEY).is_none() {
        return;
    }
    let Some(mut legacy) = read_legacy() else {
        browser::log_warn("the earlier device identity was damaged; it is removed");
        browser::local_remove(LEGACY_IDENTITY_KEY);
        return;
    };
    let url = model::url::normalize_gateway_url(gateway_url);
    if !legacy.settled.contains(&url) {
        legacy.settled.push(url);
    }
    let pending = gateways_that_met(&legacy).iter().any(|g| !legacy.settled.contains(g));
    if pending {
        browser::local_set(LEGACY_IDENTITY_KEY, &crate::io::json::encode(&legacy));
    } else {
        browser::local_remove(LEGACY_IDENTITY_KEY);
    }
}

fn device_token_key(device_id: &str, gateway_url: &str) -> String {
    format!("{DEVICE_TOKEN_PREFIX}{device_id}:{gateway_url}:operator")
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
    let stored = browser::session_keys()
        .into_iter()
        .filter(|k| k.starts_with("ocui.token.v1:"))
        .filter_map(|k| browser::session_get(&k))
        .chain(browser::local_keys().into_iter().filter(|k| k.starts_with(DEVICE_TOKEN_PREFIX)).filter_map(|k| browser::local_get(&k)));
    let mut held: Vec<String> = Vec::new();
    for t in also.iter().map(|s| s.to_string()).chain(stored) {
        if !t.trim().is_empty() && !held.contains(&t) {
            held.push(t);
        }
    }
    model::credential::set_own_secrets(&held);
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
