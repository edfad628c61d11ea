//! The browser's Ed25519 device identity (kept in `localStorage`), the device token the
//! gateway issues to it (also `localStorage`), and the shared gateway token (only ever in
//! `sessionStorage`, per tab and gateway URL).

use protocol::device::DeviceIdentity;
use serde::{Deserialize, Serialize};

use crate::browser;

const IDENTITY_KEY: &str = "ocui.device.v1";

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredIdentity {
    version: u32,
    seed: String,
    device_id: String,
    created_at_ms: f64,
}

/// Loads the identity, or creates and stores one. If storage is unavailable the identity
/// lives for this page only (the gateway then sees a new device after a reload).
pub fn load_or_create() -> Result<DeviceIdentity, String> {
    if let Some(stored) = browser::local_get(IDENTITY_KEY).and_then(|s| crate::json::decode::<StoredIdentity>(&s)) {
        if let Some(seed) = protocol::b64::decode(&stored.seed).and_then(|b| <[u8; 32]>::try_from(b).ok()) {
            let id = DeviceIdentity::from_seed(seed);
            if id.device_id() == stored.device_id {
                return Ok(id);
            }
        }
        browser::log_warn("stored device identity was damaged; creating a new one");
    }
    let mut seed = [0u8; 32];
    browser::random_bytes(&mut seed)?;
    let id = DeviceIdentity::from_seed(seed);
    let stored = StoredIdentity { version: 1, seed: protocol::b64::encode(&seed), device_id: id.device_id(), created_at_ms: browser::now_ms() };
    if !browser::local_set(IDENTITY_KEY, &crate::json::encode(&stored)) {
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
