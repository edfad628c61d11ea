//! The page's own files offline: registers the service worker (`public/sw.js`) once the page
//! has loaded, and says when the gateway serves a newer build than the one running.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::gateway_client::{GatewayClient, Status};

/// Whether a newer build of this page is stored and waits for a reload.
#[derive(Clone, Copy)]
pub struct ShellUpdate {
    pub ready: RwSignal<bool>,
}

impl ShellUpdate {
    pub fn new(client: GatewayClient) -> ShellUpdate {
        let ready = RwSignal::new(false);
        let Some(container) = web_sys::window().map(|w| w.navigator().service_worker()).filter(|c| !JsValue::from(c).is_undefined()) else {
            return ShellUpdate { ready };
        };
        // Registration waits for the page to have loaded: nothing on the way to the first paint.
        let base = crate::browser::base_path();
        let register = Closure::once_into_js(move || {
            let options = web_sys::RegistrationOptions::new();
            options.set_scope(&format!("{base}/"));
            options.set_update_via_cache(web_sys::ServiceWorkerUpdateViaCache::None);
            let promise = container.register_with_options(&format!("{base}/sw.js"), &options);
            wasm_bindgen_futures::spawn_local(async move {
                if let Err(e) = wasm_bindgen_futures::JsFuture::from(promise).await {
                    crate::browser::log_warn(&format!("the page will not open offline: its service worker could not be registered ({})", crate::browser::js_error_text(&e)));
                }
            });
        });
        if let Some(w) = web_sys::window() {
            if w.document().is_some_and(|d| d.ready_state() == "complete") {
                let _ = w.set_timeout_with_callback(register.unchecked_ref());
            } else {
                let _ = w.add_event_listener_with_callback("load", register.unchecked_ref());
            }
        }
        let on_message = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            if e.data().as_string().as_deref() == Some("ocui-update-ready") {
                ready.set(true);
            }
        });
        if let Some(c) = web_sys::window().map(|w| w.navigator().service_worker()) {
            c.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        }
        on_message.forget();
        // Once connected, ask whether the gateway now serves a newer build (a page opened from
        // the cache while the gateway was away may be older than what it serves now).
        let asked = StoredValue::new(false);
        Effect::new(move |_| {
            if client.status.get() == Status::Connected && !asked.get_value() {
                asked.set_value(true);
                if let Some(worker) = web_sys::window().and_then(|w| w.navigator().service_worker().controller()) {
                    let _ = worker.post_message(&JsValue::from_str("ocui-check-update"));
                }
            }
        });
        ShellUpdate { ready }
    }
}
