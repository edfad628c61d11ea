//! The page's own files offline: registers the service worker (`public/sw.js`) once the page
//! has loaded, and says when the gateway serves a newer build than the one running.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::io::gateway_client::{GatewayClient, Status};

/// Whether a newer build of this page is stored and waits for a reload.
#[derive(Clone, Copy)]
pub struct ServiceWorker {
    pub ready: RwSignal<bool>,
}

impl ServiceWorker {
    pub fn new(client: GatewayClient) -> ServiceWorker {
        let ready = RwSignal::new(false);
        let Some(container) = web_sys::window().map(|w| w.navigator().service_worker()).filter(|c| !JsValue::from(c).is_undefined()) else {
            return ServiceWorker { ready };
        };
        // Registration waits for the page to have loaded: nothing on the way to the first paint.
        let base = crate::io::browser::base_path();
        let register = Closure::once_into_js(move || {
            let options = web_sys::RegistrationOptions::new();
            options.set_scope(&format!("{base}/"));
            options.set_update_via_cache(web_sys::ServiceWorkerUpdateViaCache::None);
            let promise = container.register_with_options(&format!("{base}/sw.js"), &options);
            wasm_bindgen_futures::spawn_local(async move {
                if let Err(e) = wasm_bindgen_futures::JsFuture::from(promise).await {
                    crate::io::browser::log_warn(&format!(
                        "the page will not open offline: its service worker could not be registered ({})",
                        crate::io::browser::js_error_text(&e)
                    ));
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
        // On every connect, ask whether the gateway serves another build than this page runs (a
        // page opened from the cache, or one that stayed open across a gateway upgrade). The
        // page names its build by its wasm file, which changes with every build (the loader in
        // src/loader.js sets `window.ocuiBuild` to the file it fetches).
        Effect::new(move |_| {
            let _ = client.connected_epoch.get();
            if client.status.get_untracked() != Status::Connected {
                return;
            }
            let running = web_sys::window()
                .and_then(|w| js_sys::Reflect::get(&w, &"ocuiBuild".into()).ok())
                .and_then(|v| v.as_string())
                .and_then(|href| web_sys::Url::new_with_base(&href, &crate::io::browser::location()?.href().ok()?).ok())
                .map(|u| u.href());
            if let (Some(running), Some(worker)) = (running, web_sys::window().and_then(|w| w.navigator().service_worker().controller())) {
                let message = js_sys::Object::new();
                let _ = js_sys::Reflect::set(&message, &"type".into(), &"ocui-check-update".into());
                let _ = js_sys::Reflect::set(&message, &"running".into(), &running.into());
                let _ = worker.post_message(&message);
            }
        });
        ServiceWorker { ready }
    }
}
