//! The browser's side of Web Push: the notification permission, and the service worker's
//! `PushManager` subscription (made with the gateway's VAPID key). The gateway's side
//! (`push.web.*`) is `state::push`.
//!
//! Read through `Reflect` rather than web-sys's push bindings: four properties of two objects,
//! without a binding type for each.

use js_sys::{Reflect, Uint8Array};
use model::push::{BrowserSubscription, Environment, Permission};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::io::browser::js_error_text;

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn string(target: &JsValue, key: &str) -> String {
    get(target, key).as_string().unwrap_or_default()
}

/// Calls `target[name](args…)`, awaiting the promise it returns.
async fn call(target: &JsValue, name: &str, args: &[JsValue]) -> Result<JsValue, String> {
    let f: js_sys::Function = get(target, name).dyn_into().map_err(|_| format!("this browser has no {name}"))?;
    let promise = f.apply(target, &args.iter().collect::<js_sys::Array>()).map_err(|e| js_error_text(&e))?;
    JsFuture::from(js_sys::Promise::from(promise)).await.map_err(|e| js_error_text(&e))
}

pub fn permission() -> Permission {
    let Some(w) = web_sys::window() else { return Permission::Default };
    match string(&get(&w, "Notification"), "permission").as_str() {
        "granted" => Permission::Granted,
        "denied" => Permission::Denied,
        _ => Permission::Default,
    }
}

pub fn environment() -> Environment {
    let w = web_sys::window();
    let has = |target: &JsValue, key: &str| Reflect::has(target, &key.into()).unwrap_or(false);
    let (secure_context, has_push, ios, standalone) = match &w {
        Some(w) => {
            let nav = JsValue::from(w.navigator());
            let agent = w.navigator().user_agent().unwrap_or_default();
            let touch_mac = agent.contains("Macintosh") && w.navigator().max_touch_points() > 1;
            (
                w.is_secure_context(),
                has(&nav, "serviceWorker") && has(w, "PushManager") && has(w, "Notification"),
                agent.contains("iPhone") || agent.contains("iPad") || touch_mac,
                call_sync_with(w, "matchMedia", "(display-mode: standalone)").is_ok_and(|m| get(&m, "matches").is_truthy()),
            )
        }
        None => (false, false, false, false),
    };
    Environment { secure_context, has_push, permission: permission(), ios, standalone }
}

/// Asks the browser for the permission (only ever from a click on *Turn on*).
pub async fn request_permission() -> Permission {
    let Some(w) = web_sys::window() else { return Permission::Default };
    let _ = call(&get(&w, "Notification"), "requestPermission", &[]).await;
    permission()
}

/// This app's service worker registration (its scope is the base path), if registered.
async fn registration() -> Result<JsValue, String> {
    let w = web_sys::window().ok_or("no window")?;
    let container = JsValue::from(w.navigator().service_worker());
    let scope = format!("{}/", crate::io::browser::base_path());
    let reg = call(&container, "getRegistration", &[scope.into()]).await?;
    if !reg.is_undefined() && !reg.is_null() {
        return Ok(reg);
    }
    // The page registers its worker once it has loaded (`io::service_worker`): wait for it a
    // while, never for ever (a worker that cannot register would otherwise hang the setting).
    let ready = JsFuture::from(js_sys::Promise::from(get(&container, "ready")));
    let gave_up = crate::io::browser::sleep_ms(15_000);
    futures_util::pin_mut!(ready, gave_up);
    match futures_util::future::select(ready, gave_up).await {
        futures_util::future::Either::Left((Ok(reg), _)) => Ok(reg),
        _ => Err("the page's service worker is not registered (reload the page, then try again)".into()),
    }
}

fn read(sub: &JsValue) -> Result<BrowserSubscription, String> {
    let json = call_sync(sub, "toJSON")?;
    let keys = get(&json, "keys");
    let key = get(&get(sub, "options"), "applicationServerKey");
    let server_key =
        key.dyn_ref::<js_sys::ArrayBuffer>().map(|b| protocol::device::encode_b64url(&Uint8Array::new(b).to_vec())).unwrap_or_default();
    let out = BrowserSubscription {
        endpoint: string(&json, "endpoint"),
        server_key,
        p256dh: string(&keys, "p256dh"),
        auth: string(&keys, "auth"),
    };
    if out.endpoint.is_empty() || out.p256dh.is_empty() || out.auth.is_empty() {
        return Err("the browser's subscription has no endpoint or keys".into());
    }
    Ok(out)
}

fn call_sync_with(target: &JsValue, name: &str, arg: &str) -> Result<JsValue, String> {
    let f: js_sys::Function = get(target, name).dyn_into().map_err(|_| format!("no {name}"))?;
    f.call1(target, &arg.into()).map_err(|e| js_error_text(&e))
}

fn call_sync(target: &JsValue, name: &str) -> Result<JsValue, String> {
    let f: js_sys::Function = get(target, name).dyn_into().map_err(|_| format!("no {name}"))?;
    f.call0(target).map_err(|e| js_error_text(&e))
}

/// The subscription the browser holds for this app, if any.
pub async fn held() -> Result<Option<BrowserSubscription>, String> {
    let reg = registration().await?;
    let sub = call(&get(&reg, "pushManager"), "getSubscription", &[]).await?;
    if sub.is_null() || sub.is_undefined() { Ok(None) } else { read(&sub).map(Some) }
}

/// Subscribes with the gateway's VAPID key (base64url), for notifications the person sees.
pub async fn subscribe(server_key: &str) -> Result<BrowserSubscription, String> {
    let key = protocol::device::decode_b64url(server_key).ok_or("the gateway's VAPID key is not base64url")?;
    let reg = registration().await?;
    let options = js_sys::Object::new();
    let _ = Reflect::set(&options, &"userVisibleOnly".into(), &true.into());
    let _ = Reflect::set(&options, &"applicationServerKey".into(), &Uint8Array::from(key.as_slice()));
    let sub = call(&get(&reg, "pushManager"), "subscribe", &[options.into()]).await?;
    read(&sub)
}

/// Drops the browser's subscription (nothing held is not an error).
pub async fn unsubscribe() -> Result<(), String> {
    let reg = registration().await?;
    let sub = call(&get(&reg, "pushManager"), "getSubscription", &[]).await?;
    if !sub.is_null() && !sub.is_undefined() {
        call(&sub, "unsubscribe", &[]).await?;
    }
    Ok(())
}

/// Closes the notifications of this app's service worker that `ended` picks by their target
/// and the worker's scope (`model::push::notification_request`): those of requests answered,
/// decided or expired since they were shown. No worker registered: nothing to close.
pub async fn close_notifications(ended: impl Fn(&str, &str) -> bool) {
    let Some(w) = web_sys::window() else { return };
    let container = JsValue::from(w.navigator().service_worker());
    let scope = format!("{}/", crate::io::browser::base_path());
    let Ok(reg) = call(&container, "getRegistration", &[scope.into()]).await else { return };
    if reg.is_undefined() || reg.is_null() {
        return;
    }
    let scope = string(&reg, "scope");
    let Ok(shown) = call(&reg, "getNotifications", &[]).await else { return };
    for n in js_sys::Array::from(&shown).iter() {
        if ended(&string(&get(&n, "data"), "url"), &scope) {
            let _ = call_sync(&n, "close");
        }
    }
}
