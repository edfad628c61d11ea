//! Device signing: our signer against our verifier and against the documented vectors.

use protocol::connect::{AuthParams, ClientInfo, ConnectChallenge, ConnectParams};
use protocol::device::{DeviceAuthError, DeviceIdentity, PayloadVersion, SignedFields, device_id_for, verify_connect};

fn signed_params(identity: &DeviceIdentity, nonce: &str, signed_at: i64, v2: bool) -> ConnectParams {
    let scopes: Vec<String> = protocol::methods::UI_SCOPES.iter().map(|s| s.to_string()).collect();
    let challenge = ConnectChallenge { nonce: nonce.into(), ts: signed_at, capabilities: vec![] };
    let client = ClientInfo::new("openclaw-control-ui", "test", "Linux x86_64", "webchat");
    let auth = AuthParams { token: Some("TEST".into()), ..Default::default() };
    let mut p = ConnectParams::operator(client, scopes.clone(), auth, Some(identity), &challenge);
    if v2 {
        // The bundled UI signs the v2 payload; build that one by hand.
        let device_id = identity.device_id();
        let fields = SignedFields {
            device_id: &device_id,
            client_id: "openclaw-control-ui",
            client_mode: "webchat",
            role: "operator",
            scopes: &scopes,
            signed_at_ms: signed_at,
            token: "TEST",
            nonce,
            platform: "Linux x86_64",
            device_family: "",
        };
        p.device.as_mut().unwrap().signature = identity.sign_b64(&fields.payload_v2());
    }
    p
}

#[test]
fn documented_v3_payload_is_built_byte_for_byte() {
    let scopes: Vec<String> =
        ["operator.read", "operator.write", "operator.approvals", "operator.questions"].iter().map(|s| s.to_string()).collect();
    let f = SignedFields {
        device_id: "044e518e6f6c414993f05530b9575fe9922825599f06005bd7f09cd960532805",
        client_id: "openclaw-control-ui",
        client_mode: "webchat",
        role: "operator",
        scopes: &scopes,
        signed_at_ms: 1796027259988,
        token: "TEST",
        nonce: "b42f8f19-2eeb-4fcf-acb5-cd74848a8120",
        platform: " Linux",
        device_family: "",
    };
    assert_eq!(
        f.payload_v3(),
        "v3|044e518e6f6c414993f05530b9575fe9922825599f06005bd7f09cd960532805|openclaw-control-ui|webchat|operator|operator.read,operator.write,operator.approvals,operator.questions|1796027259988|TEST|b42f8f19-2eeb-4fcf-acb5-cd74848a8120|linux|"
    );
    let key = protocol::device::decode_b64url("eAA-MZjAkaXfYs_fSysk2Cy0Mfkm2jxXY7VunP113Xg").unwrap();
    assert_eq!(device_id_for(&key), "044e518e6f6c414993f05530b9575fe9922825599f06005bd7f09cd960532805");
}

#[test]
fn our_signatures_verify_in_both_versions() {
    let id = DeviceIdentity::from_seed([7; 32]);
    let p = signed_params(&id, "n-1", 1_000_000, false);
    assert_eq!(verify_connect(&p, "n-1", 1_000_000), Ok(PayloadVersion::V3));
    let p = signed_params(&id, "n-1", 1_000_000, true);
    assert_eq!(verify_connect(&p, "n-1", 1_050_000), Ok(PayloadVersion::V2));
    // The seed restores the same identity (kept in localStorage by the UI).
    assert_eq!(DeviceIdentity::from_seed(id.seed()).device_id(), id.device_id());
}

#[test]
fn each_device_failure_has_its_own_code() {
    let id = DeviceIdentity::from_seed([9; 32]);
    let good = signed_params(&id, "nonce", 5_000_000, false);
    assert_eq!(verify_connect(&good, "nonce", 5_000_000 + 121_000), Err(DeviceAuthError::SignatureExpired));
    assert_eq!(verify_connect(&good, "nonce", 5_000_000 - 121_000), Err(DeviceAuthError::SignatureExpired));
    assert_eq!(verify_connect(&good, "other", 5_000_000), Err(DeviceAuthError::NonceMismatch));
    let mut no_nonce = good.clone();
    no_nonce.device.as_mut().unwrap().nonce = None;
    assert_eq!(verify_connect(&no_nonce, "nonce", 5_000_000), Err(DeviceAuthError::NonceRequired));
    let mut wrong_id = good.clone();
    wrong_id.device.as_mut().unwrap().id = DeviceIdentity::from_seed([1; 32]).device_id();
    assert_eq!(verify_connect(&wrong_id, "nonce", 5_000_000), Err(DeviceAuthError::DeviceIdMismatch));
    let mut bad_key = good.clone();
    bad_key.device.as_mut().unwrap().public_key = "!!".into();
    assert_eq!(verify_connect(&bad_key, "nonce", 5_000_000), Err(DeviceAuthError::PublicKeyInvalid));
    let mut other_token = good.clone();
    other_token.auth = Some(AuthParams { token: Some("WRONG".into()), ..Default::default() });
    assert_eq!(verify_connect(&other_token, "nonce", 5_000_000), Err(DeviceAuthError::SignatureInvalid));
    assert_eq!(DeviceAuthError::SignatureExpired.code(), "DEVICE_AUTH_SIGNATURE_EXPIRED");
}
