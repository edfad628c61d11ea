//! Ed25519 device identity: the id, the v2/v3 signed payloads, signing and verification.
//!
//! The payloads and the id's form are always here. The Rust key pair and verification need the
//! `ed25519` feature; the UI leaves it off and signs with the browser's WebCrypto.

#[cfg(feature = "ed25519")]
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
#[cfg(feature = "ed25519")]
use sha2::{Digest, Sha256};

use base64::Engine;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

#[cfg(feature = "ed25519")]
use crate::connect::{ConnectParams, DeviceAuth};
use crate::error::detail;

/// Base64url without padding: how keys and signatures travel. Reads padded text too.
const B64URL: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_encode_padding(false).with_decode_padding_mode(DecodePaddingMode::Indifferent),
);
/// The standard alphabet, padded or not: other clients are not always strict about base64url.
const B64STD: GeneralPurpose =
    GeneralPurpose::new(&alphabet::STANDARD, GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent));

/// Base64url without padding, as the protocol writes keys and signatures.
pub fn encode_b64url(bytes: &[u8]) -> String {
    B64URL.encode(bytes)
}

/// Base64url, or standard base64, with or without padding; `None` unless canonical.
pub fn decode_b64url(text: &str) -> Option<Vec<u8>> {
    B64URL.decode(text).or_else(|_| B64STD.decode(text)).ok()
}

/// The fields that go into a signed payload.
#[derive(Debug, Clone)]
pub struct SignedFields<'a> {
    pub device_id: &'a str,
    pub client_id: &'a str,
    pub client_mode: &'a str,
    pub role: &'a str,
    pub scopes: &'a [String],
    pub signed_at_ms: i64,
    pub token: &'a str,
    pub nonce: &'a str,
    pub platform: &'a str,
    pub device_family: &'a str,
}

/// Trimmed and ASCII-lowercased (only `A`–`Z` change), as the gateway normalises it.
fn norm(s: &str) -> String {
    s.trim().to_ascii_lowercase()
}

impl SignedFields<'_> {
    pub fn payload_v3(&self) -> String {
        format!(
            "v3|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
            self.device_id,
            self.client_id,
            self.client_mode,
            self.role,
            self.scopes.join(","),
            self.signed_at_ms,
            self.token,
            self.nonce,
            norm(self.platform),
            norm(self.device_family)
        )
    }
    pub fn payload_v2(&self) -> String {
        format!(
            "v2|{}|{}|{}|{}|{}|{}|{}|{}",
            self.device_id,
            self.client_id,
            self.client_mode,
            self.role,
            self.scopes.join(","),
            self.signed_at_ms,
            self.token,
            self.nonce
        )
    }
}

/// The device id from the SHA-256 digest of the raw 32-byte public key: lowercase hex.
pub fn device_id_from_digest(digest: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    digest.iter().flat_map(|b| [HEX[usize::from(b >> 4)] as char, HEX[usize::from(b & 15)] as char]).collect()
}

/// Lowercase hex SHA-256 of the raw 32-byte public key.
#[cfg(feature = "ed25519")]
pub fn device_id_for(public_key: &[u8]) -> String {
    device_id_from_digest(&Sha256::digest(public_key))
}

/// A device key pair in Rust, for the gateway's tests and native clients (the UI's is WebCrypto's,
/// `control_ui::identity`). The seed is the only secret.
#[cfg(feature = "ed25519")]
pub struct DeviceIdentity {
    key: SigningKey,
}

#[cfg(feature = "ed25519")]
impl DeviceIdentity {
    pub fn from_seed(seed: [u8; 32]) -> Self {
        DeviceIdentity { key: SigningKey::from_bytes(&seed) }
    }
    pub fn seed(&self) -> [u8; 32] {
        self.key.to_bytes()
    }
    pub fn public_key_b64(&self) -> String {
        encode_b64url(self.key.verifying_key().as_bytes())
    }
    pub fn device_id(&self) -> String {
        device_id_for(self.key.verifying_key().as_bytes())
    }
    pub fn sign_b64(&self, payload: &str) -> String {
        encode_b64url(&self.key.sign(payload.as_bytes()).to_bytes())
    }
}

/// Why a device signature was refused; each maps to a `details.code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceAuthError {
    DeviceIdMismatch,
    SignatureExpired,
    NonceRequired,
    NonceMismatch,
    SignatureInvalid,
    PublicKeyInvalid,
}

impl DeviceAuthError {
    pub fn code(self) -> &'static str {
        match self {
            Self::DeviceIdMismatch => detail::DEVICE_AUTH_DEVICE_ID_MISMATCH,
            Self::SignatureExpired => detail::DEVICE_AUTH_SIGNATURE_EXPIRED,
            Self::NonceRequired => detail::DEVICE_AUTH_NONCE_REQUIRED,
            Self::NonceMismatch => detail::DEVICE_AUTH_NONCE_MISMATCH,
            Self::SignatureInvalid => detail::DEVICE_AUTH_SIGNATURE_INVALID,
            Self::PublicKeyInvalid => detail::DEVICE_AUTH_PUBLIC_KEY_INVALID,
        }
    }
    pub fn message(self) -> &'static str {
        match self {
            Self::DeviceIdMismatch => "device identity mismatch: device.id is not the SHA-256 of device.publicKey",
            Self::SignatureExpired => "device signature expired: signedAt is more than 120 s from the gateway clock",
            Self::NonceRequired => "device nonce required: sign the connect.challenge nonce",
            Self::NonceMismatch => "device nonce mismatch: the signed nonce is not this connection's challenge",
            Self::SignatureInvalid => "device signature invalid",
            Self::PublicKeyInvalid => "device public key invalid",
        }
    }
}

/// Which payload version verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadVersion {
    V3,
    V2,
}

#[cfg(feature = "ed25519")]
/// Verifies `params.device` the way the real gateway does, in its order: id, clock skew,
/// nonce, then the signature (v3 first, then v2).
pub fn verify_connect(params: &ConnectParams, challenge_nonce: &str, now_ms: i64) -> Result<PayloadVersion, DeviceAuthError> {
    let device: &DeviceAuth = params.device.as_ref().ok_or(DeviceAuthError::SignatureInvalid)?;
    let key_bytes = decode_b64url(&device.public_key).ok_or(DeviceAuthError::PublicKeyInvalid)?;
    if device_id_for(&key_bytes) != device.id {
        return Err(DeviceAuthError::DeviceIdMismatch);
    }
    if (now_ms - device.signed_at).abs() > crate::SIGNATURE_SKEW_MS {
        return Err(DeviceAuthError::SignatureExpired);
    }
    let nonce = device.nonce.as_deref().filter(|n| !n.is_empty()).ok_or(DeviceAuthError::NonceRequired)?;
    if nonce != challenge_nonce {
        return Err(DeviceAuthError::NonceMismatch);
    }
    let key_arr: [u8; 32] = key_bytes.as_slice().try_into().map_err(|_| DeviceAuthError::PublicKeyInvalid)?;
    let key = VerifyingKey::from_bytes(&key_arr).map_err(|_| DeviceAuthError::PublicKeyInvalid)?;
    let sig_bytes = decode_b64url(&device.signature).ok_or(DeviceAuthError::SignatureInvalid)?;
    let sig_arr: [u8; 64] = sig_bytes.as_slice().try_into().map_err(|_| DeviceAuthError::SignatureInvalid)?;
    let sig = Signature::from_bytes(&sig_arr);
    let empty = Vec::new();
    let fields = SignedFields {
        device_id: &device.id,
        client_id: &params.client.id,
        client_mode: &params.client.mode,
        role: params.role.as_deref().unwrap_or("operator"),
        scopes: params.scopes.as_ref().unwrap_or(&empty),
        signed_at_ms: device.signed_at,
        token: params.auth.as_ref().map(|a| a.signing_token()).unwrap_or(""),
        nonce,
        platform: &params.client.platform,
        device_family: params.client.device_family.as_deref().unwrap_or(""),
    };
    if key.verify(fields.payload_v3().as_bytes(), &sig).is_ok() {
        return Ok(PayloadVersion::V3);
    }
    if key.verify(fields.payload_v2().as_bytes(), &sig).is_ok() {
        return Ok(PayloadVersion::V2);
    }
    Err(DeviceAuthError::SignatureInvalid)
}

/// One fixed Ed25519 vector (seed, public key, id, signature) that the Rust key pair here and
/// the UI's WebCrypto identity must both reproduce: the two implementations sign alike.
pub mod vector {
    pub const SEED: [u8; 32] = [7; 32];
    pub const PAYLOAD: &str = "v3|device|openclaw-control-ui|webchat|operator|operator.read|1700000000000|token|nonce|linux x86_64|";
    pub const PUBLIC_KEY_B64: &str = "6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw";
    pub const DEVICE_ID: &str = "fe812c12f3ab4ce6ac5db69ac352f906cb1b11ef43fb33e252ef7ff552263889";
    pub const SIGNATURE_B64: &str = "dPdC6Dh-iZSnqUzG3wcDKPJdoUIsskjAp1-SRigSiS3IcjsyibOkWyJ6lVKaJRgAwwN-0vOIrhdLrJXg5yXfAA";
}

#[cfg(all(test, feature = "ed25519"))]
mod vector_tests {
    use super::*;

    #[test]
    fn the_rust_key_pair_reproduces_the_shared_vector() {
        let id = DeviceIdentity::from_seed(vector::SEED);
        assert_eq!(id.public_key_b64(), vector::PUBLIC_KEY_B64);
        assert_eq!(id.device_id(), vector::DEVICE_ID);
        assert_eq!(id.sign_b64(vector::PAYLOAD), vector::SIGNATURE_B64);
    }
}

#[cfg(test)]
mod b64_tests {
    use super::*;

    #[test]
    fn base64url_is_written_unpadded_and_read_in_every_form_clients_send() {
        for (raw, enc) in [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("\u{ff}\u{fe}", "w7_Dvg")] {
            assert_eq!(encode_b64url(raw.as_bytes()), enc);
            assert_eq!(decode_b64url(enc).unwrap(), raw.as_bytes());
        }
        assert_eq!(decode_b64url("Zg=="), Some(b"f".to_vec()), "padded");
        assert_eq!(decode_b64url("w7/Dvg"), Some("\u{ff}\u{fe}".as_bytes().to_vec()), "standard alphabet");
        assert_eq!(decode_b64url("+/8="), Some(vec![0xfb, 0xff]), "standard alphabet, padded");
        assert_eq!(decode_b64url("Z"), None);
        assert_eq!(decode_b64url("Zh"), None, "non-zero leftover bits are rejected");
        assert_eq!(decode_b64url("Zm9v!"), None);
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_round_trip(bytes: Vec<u8>) {
            proptest::prop_assert_eq!(decode_b64url(&encode_b64url(&bytes)), Some(bytes));
        }
        #[test]
        fn decoding_never_panics(text: String) {
            let _ = decode_b64url(&text);
        }
    }
}
