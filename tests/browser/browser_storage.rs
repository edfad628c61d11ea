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

use control_ui::io::identity::load_or_create;
use wasm_bindgen::prelude::*;

// What any script on the page could do with a stored device key: read the record and try to
// export its private key.
#[wasm_bindgen(inline_js = r#"
export function stored_key(db_name) {
  return new Promise((resolve) => {
    const open = indexedDB.open(db_name);
    open.onerror = () => resolve({ error: String(open.error) });
    open.onsuccess = () => {
      const db = open.result;
      if (!db.objectStoreNames.contains("device")) { db.close(); resolve({ error: "no device store" }); return; }
      const get = db.transaction("device").objectStore("device").get("operator");
      get.onsuccess = async () => {
        db.close();
        const r = get.result;
        if (!r) { resolve({ error: "no record" }); return; }
        let exported = "refused";
        try { await crypto.subtle.exportKey("pkcs8", r.privateKey); exported = "exported"; } catch (e) { exported = e.name; }
        resolve({ deviceId: r.deviceId, extractable: r.privateKey.extractable, exported });
      };
    };
  });
}
export function put_record(db_name, record) {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(db_name);
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction("device", "readwrite");
      tx.objectStore("device").put(record, "operator");
      tx.oncomplete = () => { db.close(); resolve(); };
      tx.onerror = () => reject(tx.error);
    };
  });
}
"#)]
extern "C" {
    async fn stored_key(db_name: &str) -> JsValue;
    async fn put_record(db_name: &str, record: JsValue);
}

fn db_of(url: &str) -> String {
    control_ui::io::storage::gateway_db(url, &control_ui::io::browser::own_gateway_url())
}

fn field(v: &JsValue, name: &str) -> JsValue {
    js_sys::Reflect::get(v, &name.into()).unwrap()
}

/// Forgets what this page's earlier tests stored about gateways and devices.
fn forget_gateways() {
    let s = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    let keys: Vec<String> = (0..s.length().unwrap()).filter_map(|i| s.key(i).unwrap()).collect();
    for k in keys {
        if k.starts_with("ocui.device") || k.starts_with("ocui.lastScopes.v1:") || k == "ocui.gateways.v1" {
            s.remove_item(&k).unwrap();
        }
    }
}

#[wasm_bindgen_test]
async fn each_gateway_gets_its_own_non_extractable_device_key_kept_in_its_store() {
    forget_gateways();
    let (one, two) = ("ws://127.0.0.1:9101", "ws://127.0.0.1:9102");
    let a = load_or_create(one).await.unwrap();
    assert_eq!(a.device_id().len(), 64);
    assert_eq!(load_or_create(one).await.unwrap().device_id(), a.device_id(), "the same gateway, the same device");
    let b = load_or_create(two).await.unwrap();
    assert_ne!(b.device_id(), a.device_id(), "another gateway sees another device");

    let stored = stored_key(&db_of(one)).await;
    assert_eq!(field(&stored, "deviceId").as_string().as_deref(), Some(a.device_id().as_str()), "{stored:?}");
    assert_eq!(field(&stored, "extractable"), JsValue::FALSE, "the private key cannot be read back");
    assert_eq!(field(&stored, "exported").as_string().as_deref(), Some("InvalidAccessError"), "WebCrypto refuses to export it");
    // Nothing of the key is in localStorage, where any script of the origin reads text.
    assert!(!local_dump().contains(&a.device_id()), "{}", local_dump());
    assert!(local_dump().lines().all(|l| !l.starts_with("ocui.device.v1=")));
    // It signs what the gateway verifies (the id is its public key's SHA-256).
    assert_eq!(a.sign_b64("payload").await.unwrap().len(), 86);
}

#[wasm_bindgen_test]
async fn the_earlier_single_key_stays_with_the_gateways_that_met_it_and_leaves_storage_once_all_have_it() {
    use protocol::device::vector;
    forget_gateways();
    let s = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    let (paired, used, new) = ("ws://127.0.0.1:9201", "ws://127.0.0.1:9202", "ws://127.0.0.1:9203");
    // As earlier builds left it: the seed in localStorage, a device token from one gateway,
    // the scopes another granted.
    let legacy = format!(
        r#"{{"version":1,"seed":"{}","deviceId":"{}","createdAtMs":1.0}}"#,
        protocol::device::encode_b64url(&vector::SEED),
        vector::DEVICE_ID
    );
    s.set_item("ocui.device.v1", &legacy).unwrap();
    s.set_item(&format!("ocui.deviceToken.v1:{}:{paired}:operator", vector::DEVICE_ID), "issued-token").unwrap();
    s.set_item(&format!("ocui.lastScopes.v1:{used}"), "[]").unwrap();

    assert_eq!(load_or_create(paired).await.unwrap().device_id(), vector::DEVICE_ID, "its pairing holds");
    assert_eq!(field(&stored_key(&db_of(paired)).await, "extractable"), JsValue::FALSE, "sealed into its store");
    assert!(s.get_item("ocui.device.v1").unwrap().is_some(), "kept for the other gateway that met it");
    assert_ne!(load_or_create(new).await.unwrap().device_id(), vector::DEVICE_ID, "a gateway it never met gets its own");
    assert_eq!(load_or_create(used).await.unwrap().device_id(), vector::DEVICE_ID);
    assert_eq!(s.get_item("ocui.device.v1").unwrap(), None, "every gateway that met it has it: the seed is gone");
    // From its store from now on.
    assert_eq!(load_or_create(paired).await.unwrap().device_id(), vector::DEVICE_ID);
    assert_eq!(load_or_create(used).await.unwrap().device_id(), vector::DEVICE_ID);
}

#[wasm_bindgen_test]
async fn a_damaged_key_record_or_earlier_identity_is_replaced_not_fatal() {
    forget_gateways();
    let url = "ws://127.0.0.1:9301";
    let first = load_or_create(url).await.unwrap();
    put_record(&db_of(url), JsValue::from_str("{not a key")).await;
    let replaced = load_or_create(url).await.unwrap();
    assert_ne!(replaced.device_id(), first.device_id());
    assert_eq!(load_or_create(url).await.unwrap().device_id(), replaced.device_id(), "the replacement is kept");

    let s = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    s.set_item("ocui.device.v1", "{not json").unwrap();
    assert_eq!(load_or_create("ws://127.0.0.1:9302").await.unwrap().device_id().len(), 64);
    assert_eq!(s.get_item("ocui.device.v1").unwrap(), None, "the damaged earlier identity is removed");
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
    forget_gateways();
    let result = load_or_create("ws://127.0.0.1:9401").await;
    for (n, f) in names.iter().zip(saved) {
        Reflect::set(&proto, &(*n).into(), &f).unwrap();
    }
    let err = result.err().expect("no identity without Ed25519");
    assert!(err.contains("failed in WebCrypto") && err.contains("Unrecognized name"), "{err}");
    // And with WebCrypto back, an identity is made again.
    assert_eq!(load_or_create("ws://127.0.0.1:9401").await.unwrap().device_id().len(), 64);
}
