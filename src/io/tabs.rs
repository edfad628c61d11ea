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
    let locks =
        web_sys::window().and_then(|w| Reflect::get(&w.navigator(), &"locks".into()).ok()).filter(|l| !l.is_undefined() && !l.is_null());
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
        crate::io::browser::log_warn("Web Locks request failed; this tab drains the outbox on its own");
    }
}

/// Runs `on_won` in at most one tab: the first to ask for the lock `name` while nobody holds it,
/// which then keeps it for `hold_ms` so that tabs asking at the same moment lose. The lock
/// manager is shared by all tabs of the browser at once (unlike localStorage, whose writes reach
/// other tabs a moment later). Without Web Locks, `on_won` runs.
pub fn claim(name: &str, hold_ms: u32, on_won: impl FnOnce() + 'static) {
    let locks =
        web_sys::window().and_then(|w| Reflect::get(&w.navigator(), &"locks".into()).ok()).filter(|l| !l.is_undefined() && !l.is_null());
    let request = locks.as_ref().and_then(|l| Reflect::get(l, &"request".into()).ok()).and_then(|f| f.dyn_into::<Function>().ok());
    let (Some(locks), Some(request)) = (locks, request) else {
        on_won();
        return;
    };
    let options = js_sys::Object::new();
    let _ = Reflect::set(&options, &"ifAvailable".into(), &JsValue::TRUE);
    let callback = Closure::once_into_js(move |lock: JsValue| -> JsValue {
        if lock.is_null() {
            return JsValue::UNDEFINED; // another tab holds it: that tab won
        }
        on_won();
        Promise::new(&mut |resolve, _| {
            if let Some(w) = web_sys::window() {
                let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, hold_ms as i32);
            }
        })
        .into()
    });
    if request.call3(&locks, &JsValue::from_str(name), &options, &callback).is_err() {
        crate::io::browser::log_warn("Web Locks request failed");
    }
}

/// A named BroadcastChannel carrying JSON strings between tabs (or, with the raw pair,
/// anything the browser can copy between them, Blobs included).
#[derive(Clone)]
pub struct Channel {
    inner: Option<Rc<web_sys::BroadcastChannel>>,
}

impl Channel {
    pub fn open(name: &str, on_message: impl Fn(serde_json::Value) + 'static) -> Channel {
        Self::open_raw(name, move |data| {
            if let Some(v) = data.as_string().and_then(|s| crate::io::json::decode(&s)) {
                on_message(v);
            }
        })
    }

    /// Like [`Channel::open`], with each message as the browser delivers it.
    pub fn open_raw(name: &str, on_message: impl Fn(JsValue) + 'static) -> Channel {
        let Ok(ch) = web_sys::BroadcastChannel::new(name) else { return Channel { inner: None } };
        let cb = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| on_message(ev.data()));
        ch.set_onmessage(Some(cb.as_ref().unchecked_ref()));
        cb.forget();
        Channel { inner: Some(Rc::new(ch)) }
    }

    /// A channel that carries nothing (until replaced by an open one).
    pub fn unopened() -> Channel {
        Channel { inner: None }
    }

    pub fn post(&self, message: &serde_json::Value) {
        self.post_raw(&JsValue::from_str(&protocol::frame::compact(message)));
    }

    pub fn post_raw(&self, message: &JsValue) {
        if let Some(ch) = &self.inner {
            let _ = ch.post_message(message);
        }
    }
}

/// A random UUID from the browser.
pub fn uuid() -> String {
    web_sys::window()
        .and_then(|w| w.crypto().ok())
        .map(|c| c.random_uuid())
        .unwrap_or_else(|| format!("{}-{}", js_sys::Date::now(), js_sys::Math::random()))
}
