//! In headless Chromium: the device identity and tokens land in the right storage.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::*;

fn local_dump() -> String {
    let s = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    (0..s.length().unwrap())
        .filter_map(|i| s.key(i).unwrap())
        .map(|k| format!("{k}={}", s.get_item(&k).unwrap().unwrap_or_default()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[wasm_bindgen_test]
async fn webcrypto_identity_matches_the_rust_ed25519_vector() {
    use protocol::device::vector;
    let id = control_ui::io::identity::DeviceIdentity::from_seed(&vector::SEED).await.unwrap();
    assert_eq!(id.public_key_b64(), vector::PUBLIC_KEY_B64);
    assert_eq!(id.device_id(), vector::DEVICE_ID);
    assert_eq!(id.sign_b64(vector::PAYLOAD).await.unwrap(), vector::SIGNATURE_B64);
    assert_ne!(id.sign_b64("another payload").await.unwrap(), vector::SIGNATURE_B64);
}

#[wasm_bindgen_test]
async fn device_identity_is_created_once_and_reused() {
    let a = control_ui::io::identity::load_or_create().await.unwrap();
    let b = control_ui::io::identity::load_or_create().await.unwrap();
    assert_eq!(a.device_id(), b.device_id());
    assert_eq!(a.device_id().len(), 64);
    assert!(local_dump().contains(&a.device_id()));
}

#[wasm_bindgen_test]
async fn a_damaged_identity_is_replaced_not_fatal() {
    let s = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    s.set_item("ocui.device.v1", "{not json").unwrap();
    let id = control_ui::io::identity::load_or_create().await.unwrap();
    assert_eq!(id.device_id().len(), 64);
    assert!(s.get_item("ocui.device.v1").unwrap().unwrap().contains(&id.device_id()));
}

#[wasm_bindgen_test]
fn the_shared_token_stays_in_session_storage_only() {
    let url = "ws://127.0.0.1:9";
    control_ui::io::identity::set_session_token(url, Some("sekrit-token-123"));
    assert_eq!(control_ui::io::identity::session_token(url).as_deref(), Some("sekrit-token-123"));
    assert!(!local_dump().contains("sekrit-token-123"));
    control_ui::io::identity::set_session_token(url, None);
    assert_eq!(control_ui::io::identity::session_token(url), None);
}

#[wasm_bindgen_test]
async fn without_webcrypto_ed25519_the_identity_error_says_why() {
    use js_sys::Reflect;
    let subtle = web_sys::window().unwrap().crypto().unwrap().subtle();
    let proto = js_sys::Object::get_prototype_of(&subtle);
    let names = ["generateKey", "importKey"];
    let saved: Vec<_> = names.iter().map(|n| Reflect::get(&proto, &(*n).into()).unwrap()).collect();
    // What a browser without Ed25519 in WebCrypto answers.
    let refuse =
        js_sys::Function::new_no_args("return Promise.reject(new DOMException('Algorithm: Unrecognized name', 'NotSupportedError'))");
    for n in names {
        Reflect::set(&proto, &n.into(), &refuse).unwrap();
    }
    web_sys::window().unwrap().local_storage().unwrap().unwrap().remove_item("ocui.device.v1").unwrap();
    let result = control_ui::io::identity::load_or_create().await;
    for (n, f) in names.iter().zip(saved) {
        Reflect::set(&proto, &(*n).into(), &f).unwrap();
    }
    let err = result.err().expect("no identity without Ed25519");
    assert!(err.contains("failed in WebCrypto") && err.contains("Unrecognized name"), "{err}");
    // And with WebCrypto back, an identity is made again.
    assert_eq!(control_ui::io::identity::load_or_create().await.unwrap().device_id().len(), 64);
}
