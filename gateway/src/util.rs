//! Small helpers: time, ids and random tokens.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use rand::RngCore;

pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    rand::thread_rng().fill_bytes(&mut b);
    b
}

/// A random (version 4) UUID.
pub fn uuid_v4() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A random secret token, base64url (256 bits).
pub fn random_token() -> String {
    protocol::device::encode_b64url(&random_bytes::<32>())
}

/// Client- or user-given text for a message: at most 80 characters.
pub fn truncate_for_log(s: &str) -> String {
    protocol::frame::truncate(s, 80)
}

/// What a URL fragment's token keeps as it is: letters, digits and `-_.~`.
const FRAGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// `encodeURIComponent`.
pub fn encode_uri_component(s: &str) -> String {
    protocol::text::encode_uri_component(s)
}

/// Escapes a token for a URL fragment (tokens we make are already safe).
pub fn fragment_escape(s: &str) -> String {
    utf8_percent_encode(s, FRAGMENT).to_string()
}

/// Constant-time equality for secrets.
pub fn secret_eq(a: &str, b: &str) -> bool {
    use sha2::{Digest, Sha256};
    use subtle::ConstantTimeEq;
    // Hash first so the comparison time does not depend on the lengths either.
    let (ha, hb) = (Sha256::digest(a.as_bytes()), Sha256::digest(b.as_bytes()));
    ha.ct_eq(&hb).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_version_4_and_distinct() {
        let (a, b) = (uuid_v4(), uuid_v4());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
    }

    #[test]
    fn secret_eq_compares_contents() {
        assert!(secret_eq("abc", "abc"));
        assert!(!secret_eq("abc", "abd"));
        assert!(!secret_eq("abc", "abcd"));
    }
}

/// The SHA-256 of a token, in hex: what the database keeps.
pub fn hash_token(token: &str) -> String {
    <sha2::Sha256 as sha2::Digest>::digest(token.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}
