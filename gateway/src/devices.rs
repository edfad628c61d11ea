//! Device tokens: what a paired browser presents instead of the shared token.
//!
//! A device token is never stored. It is derived, `HMAC-SHA256(shared token, device id, salt)`,
//! and the database keeps only its SHA-256 and the salt. So:
//! - a copy of the database gives no working token;
//! - a token is bound to the shared token it was paired under: when the shared token changes,
//!   every device token stops working and devices pair again with the new one;
//! - `gateway devices revoke <id>` drops the hash and salt: that token works nowhere again, and
//!   pairing again (with the shared token) gives a new one;
//! - a token unused for [`DEVICE_TOKEN_IDLE_MS`] has expired.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::Gateway;
pub use crate::store::prepare_data_dir;
use crate::store::{Device, Store};
pub use crate::util::hash_token;

/// A device token unused this long no longer works (30 days).
pub const DEVICE_TOKEN_IDLE_MS: i64 = 30 * 24 * 3600 * 1000;

/// The token of `device_id` with `salt` under `shared_token`.
pub fn derive_token(shared_token: &str, device_id: &str, salt: &str) -> String {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(shared_token.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(b"openclaw-device-token:v1\0");
    mac.update(device_id.as_bytes());
    mac.update(b"\0");
    mac.update(salt.as_bytes());
    protocol::device::encode_b64url(&mac.finalize().into_bytes())
}

/// Pairs (or touches) a device after it proved itself, and returns the token it holds now.
pub fn pair(gw: &Gateway, device_id: &str, public_key: &str, client_id: &str, now_ms: i64) -> rusqlite::Result<String> {
    let shared = gw.config.token.clone();
    let id = device_id.to_string();
    let salt = gw.store.pair_device(device_id, public_key, client_id, now_ms, &crate::util::random_token(), move |salt| {
        derive_token(&shared, &id, salt)
    })?;
    Ok(derive_token(&gw.config.token, device_id, &salt))
}

/// Why a device token does not work, in words for the log and the refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    Unknown,
    Revoked,
    /// Paired under another shared token.
    SharedTokenChanged,
    Expired,
}

fn check(shared_token: &str, d: &Device, token: &str, now_ms: i64) -> Result<(), Refused> {
    if d.revoked_at_ms.is_some() {
        return Err(Refused::Revoked);
    }
    let (Some(hash), Some(salt)) = (&d.token_hash, &d.token_salt) else { return Err(Refused::Unknown) };
    if !crate::util::secret_eq(hash, &hash_token(token)) {
        return Err(Refused::Unknown);
    }
    if !crate::util::secret_eq(&derive_token(shared_token, &d.device_id, salt), token) {
        return Err(Refused::SharedTokenChanged);
    }
    if now_ms - d.last_seen_ms > DEVICE_TOKEN_IDLE_MS {
        return Err(Refused::Expired);
    }
    Ok(())
}

/// Whether `token` is the working token of the known device `d`.
pub fn verify_for(gw: &Gateway, d: &Device, token: &str, now_ms: i64) -> Result<(), Refused> {
    check(&gw.config.token, d, token, now_ms)
}

/// The device a token belongs to, if it works (the media route's `Authorization: Bearer`).
pub fn device_with_token(gw: &Gateway, token: &str, now_ms: i64) -> Option<String> {
    let d = gw.store.device_by_token_hash(&hash_token(token)).ok().flatten()?;
    check(&gw.config.token, &d, token, now_ms).ok()?;
    let _ = gw.store.touch_device(&d.device_id, now_ms);
    Some(d.device_id)
}

/// Closes (1008) the open sockets of every device revoked since it connected. Revocation is
/// written to the database by `gateway devices revoke`, another process, so the gateway looks
/// every [`crate::Config::revocation_poll`] while devices are connected, until it stops.
pub async fn end_revoked_sockets(gw: std::sync::Arc<Gateway>) {
    let stopping = gw.drain.stopping();
    tokio::pin!(stopping);
    loop {
        tokio::select! {
            _ = &mut stopping => return,
            _ = tokio::time::sleep(gw.config.revocation_poll) => {}
        }
        let connected = gw.hub.device_ids();
        if connected.is_empty() {
            continue;
        }
        let revoked = match gw.store.revoked_devices() {
            Ok(r) => r,
            Err(e) => {
                crate::log::warn(&format!("devices: cannot read revocations: {e}"));
                continue;
            }
        };
        for id in connected.iter().filter(|id| revoked.contains(id)) {
            let n = gw.hub.evict_where(|p| p.device_id.as_deref() == Some(id.as_str()), crate::hub::CLOSE_POLICY, "device revoked");
            crate::log::info(&format!("devices: {id} was revoked: closed its {n} connection(s)"));
        }
    }
}

fn when(ms: i64) -> String {
    let (y, m, d, h, min, _) = protocol::time::civil(ms);
    format!("{y:04}-{m:02}-{d:02} {h:02}:{min:02} UTC")
}

/// `gateway devices list`: one line per paired device.
pub fn list(store: &Store, now_ms: i64) -> rusqlite::Result<String> {
    let devices = store.devices()?;
    if devices.is_empty() {
        return Ok("No device is paired.\n".into());
    }
    let mut out = String::from(
        "DEVICE ID                                                         CLIENT                 LAST SEEN             STATE\n",
    );
    for d in devices {
        let state = if d.revoked_at_ms.is_some() {
            "revoked"
        } else if d.token_hash.is_none() {
            "must pair again"
        } else if now_ms - d.last_seen_ms > DEVICE_TOKEN_IDLE_MS {
            "expired"
        } else {
            "active"
        };
        out.push_str(&format!("{:<65} {:<22} {:<21} {state}\n", d.device_id, d.client_id, when(d.last_seen_ms)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_bound_to_its_shared_token_and_salt() {
        let a = derive_token("shared-1", "dev", "salt");
        assert_eq!(a, derive_token("shared-1", "dev", "salt"));
        assert_ne!(a, derive_token("shared-2", "dev", "salt"));
        assert_ne!(a, derive_token("shared-1", "dev", "salt2"));
        assert_ne!(a, derive_token("shared-1", "dev2", "salt"));
        let d = Device {
            device_id: "dev".into(),
            public_key: "pk".into(),
            client_id: "c".into(),
            token_hash: Some(hash_token(&a)),
            token_salt: Some("salt".into()),
            created_at_ms: 0,
            last_seen_ms: 0,
            revoked_at_ms: None,
        };
        assert_eq!(check("shared-1", &d, &a, 1), Ok(()));
        assert_eq!(check("shared-2", &d, &a, 1), Err(Refused::SharedTokenChanged));
        assert_eq!(check("shared-1", &d, "other", 1), Err(Refused::Unknown));
        assert_eq!(check("shared-1", &d, &a, DEVICE_TOKEN_IDLE_MS + 1), Err(Refused::Expired));
        assert_eq!(check("shared-1", &Device { revoked_at_ms: Some(1), ..d }, &a, 1), Err(Refused::Revoked));
        assert_eq!(when(0), "1970-01-01 00:00 UTC");
        assert_eq!(when(1_796_256_000_000), "2026-12-03 00:00 UTC");
    }
}
