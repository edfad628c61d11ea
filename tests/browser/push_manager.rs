//! In headless Chromium: the page's side of Web Push (`io::push`) against a stub of the
//! service worker's `PushManager` (a browser's push service cannot be reached from the test
//! machines; docs/testing.md). The subscription is made with the gateway's key as bytes, read
//! back as the gateway wants it (endpoint, `p256dh`, `auth`, the key it was made with), and
//! dropped by `unsubscribe`; a key that is not base64url is refused in words.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::*;

/// Stubs `navigator.serviceWorker.getRegistration` with a registration whose `pushManager`
/// hands out one subscription, made with the key passed to `subscribe`.
fn stub() {
    let script = String::from(
        "let held = null;
         const pushManager = {
           async subscribe(o) {
             if (!o.userVisibleOnly) throw new Error('userVisibleOnly must be true');
             const k = o.applicationServerKey;
             const key = k.buffer.slice(k.byteOffset, k.byteOffset + k.byteLength);
             held = { endpoint: 'https://push.example/sub/1', options: { applicationServerKey: key },
               toJSON() { return { endpoint: this.endpoint, keys: { p256dh: 'BPUBLIC', auth: 'AUTH' } }; },
               async unsubscribe() { held = null; return true; } };
             return held;
           },
           async getSubscription() { return held; },
         };
         Object.defineProperty(navigator.serviceWorker, 'getRegistration', { configurable: true,
           value: async () => ({ pushManager }) });
",
    );
    js_sys::eval(&script).expect("the stub installs");
}

#[wasm_bindgen_test]
async fn a_subscription_is_made_with_the_gateways_key_read_back_and_dropped() {
    stub();
    assert_eq!(control_ui::io::push::held().await, Ok(None));
    // A P-256 point's 65 bytes, base64url, as `push.web.vapidPublicKey` sends it.
    let key = protocol::device::encode_b64url(&[4u8; 65]);
    let sub = control_ui::io::push::subscribe(&key).await.expect("subscribed");
    assert_eq!(sub.endpoint, "https://push.example/sub/1");
    assert_eq!((sub.p256dh.as_str(), sub.auth.as_str()), ("BPUBLIC", "AUTH"));
    assert_eq!(sub.server_key, key, "made with exactly the gateway's key");
    assert_eq!(control_ui::io::push::held().await, Ok(Some(sub)));
    control_ui::io::push::unsubscribe().await.expect("unsubscribed");
    assert_eq!(control_ui::io::push::held().await, Ok(None));
    let bad = control_ui::io::push::subscribe("not base64url!").await.unwrap_err();
    assert!(bad.contains("VAPID key"), "{bad}");
}
