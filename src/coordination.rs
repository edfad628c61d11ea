//! Tabs of one browser coordinating: a Web Lock elects the one tab that drains the outbox,
//! and a BroadcastChannel tells the other tabs that shared state changed.

use std::rc::Rc;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

/// Calls `on_leader` once this tab holds the lock `name`, which it then keeps for the rest
/// of its life (another tab takes over when this one closes). Without Web Locks (very old
/// browsers, some embedded views) the tab leads on its own.
pub fn lead(name: &str, on_leader: impl FnOnce() + 'static) {
    let locks = web_sys::window().and_then(|w| Reflect::get(&w.navigator(), &"locks".into()).ok()).filter(|l| !l.is_undefined() && !l.is_null());
    let Some(locks) = locks else {
        on_leader();
        return;
    };
    let request: Function = match Reflect::get(&locks, &"request".into()).and_then(|f| f.dyn_into::<Function>().map_err(JsValue::from)) {
        Ok(f) => f,
        Err(_) => {
            on_leader();
            return;
        }
    };
    let callback = Closure::once_into_js(move |_lock: JsValue| -> Promise {
        on_leader();
        // Never resolves: the lock is held until the page goes away.
        Promise::new(&mut |_resolve, _reject| {})
    });
    if request.call2(&locks, &JsValue::from_str(name), &callback).is_err() {
        crate::browser::log_warn("Web Locks request failed; this tab drains the outbox on its own");
    }
}

/// Runs `f` while this tab holds the lock `name`, released as soon as `f` returns: tabs run
/// their `f` one at a time. Without Web Locks, `f` runs at once.
pub fn with_lock(name: &str, f: impl FnOnce() + 'static) {
    let locks = web_sys::window().and_then(|w| Reflect::get(&w.navigator(), &"locks".into()).ok()).filter(|l| !l.is_undefined() && !l.is_null());
    let request = locks.as_ref().and_then(|l| Reflect::get(l, &"request".into()).ok()).and_then(|f| f.dyn_into::<Function>().ok());
    let (Some(locks), Some(request)) = (locks, request) else {
        f();
        return;
    };
    let f = Rc::new(std::cell::Cell::new(Some(f)));
    let run = f.clone();
    let callback = Closure::once_into_js(move |_lock: JsValue| {
        if let Some(f) = run.take() {
            f();
        }
    });
    if request.call2(&locks, &JsValue::from_str(name), &callback).is_err() {
        if let Some(f) = f.take() {
            f();
        }
    }
}

/// A named BroadcastChannel carrying JSON strings between tabs.
#[derive(Clone)]
pub struct Channel {
    inner: Option<Rc<web_sys::BroadcastChannel>>,
}

impl Channel {
    pub fn open(name: &str, on_message: impl Fn(serde_json::Value) + 'static) -> Channel {
        let Ok(ch) = web_sys::BroadcastChannel::new(name) else { return Channel { inner: None } };
        let cb = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
            if let Some(v) = ev.data().as_string().and_then(|s| crate::json::decode(&s)) {
                on_message(v);
            }
        });
        ch.set_onmessage(Some(cb.as_ref().unchecked_ref()));
        cb.forget();
        Channel { inner: Some(Rc::new(ch)) }
    }

    pub fn post(&self, message: &serde_json::Value) {
        if let Some(ch) = &self.inner {
            let _ = ch.post_message(&JsValue::from_str(&protocol::frame::compact(message)));
        }
    }
}

/// A random UUID from the browser.
pub fn uuid() -> String {
    web_sys::window().and_then(|w| w.crypto().ok()).map(|c| c.random_uuid()).unwrap_or_else(|| format!("{}-{}", js_sys::Date::now(), js_sys::Math::random()))
}
