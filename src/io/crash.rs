//! What a person and a developer see when the UI's wasm fails.
//!
//! A panic writes its message and location to the console (`console_error_panic_hook`), then
//! the release build aborts (`panic = "abort"`), which surfaces as a `WebAssembly.RuntimeError`
//! thrown out of whatever event handler or task hit it; from then on the UI may not respond.
//! Rather than leave a page that silently ignores clicks, a plain banner goes on top saying so
//! and offering a reload. It is built with bare DOM calls, never through Leptos, whose state may
//! be half-updated. Drafts and queued answers are already in IndexedDB, so a reload loses nothing.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use web_sys::Event;

pub const BANNER_ID: &str = "ocui-crash";
pub const MESSAGE: &str = "The Control UI hit an internal error and stopped responding. Your drafts and queued answers are saved in this browser; reload the page to continue.";

fn is_trap(error: &wasm_bindgen::JsValue) -> bool {
    error.is_instance_of::<js_sys::WebAssembly::RuntimeError>()
}

/// Shows the banner once (later traps change nothing).
pub fn show_banner() {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return };
    if doc.get_element_by_id(BANNER_ID).is_some() {
        return;
    }
    let (Ok(banner), Ok(text), Ok(button), Some(body)) =
        (doc.create_element("div"), doc.create_element("p"), doc.create_element("button"), doc.body())
    else {
        return;
    };
    banner.set_id(BANNER_ID);
    banner.set_class_name("banner banner--error crash");
    let _ = banner.set_attribute("role", "alert");
    text.set_text_content(Some(MESSAGE));
    let _ = button.set_attribute("type", "button");
    button.set_text_content(Some("Reload page"));
    let reload = Closure::<dyn Fn(Event)>::new(|_: Event| {
        if let Some(loc) = web_sys::window().map(|w| w.location()) {
            let _ = loc.reload();
        }
    });
    let _ = button.add_event_listener_with_callback("click", reload.as_ref().unchecked_ref());
    reload.forget();
    let _ = banner.append_child(&text);
    let _ = banner.append_child(&button);
    let _ = body.prepend_with_node_1(&banner);
}

/// Logs every panic with its message and location and puts up the banner; also listens for
/// traps that escape event handlers (`error`) and tasks (`unhandledrejection`) without a panic
/// (an `unreachable` in foreign code, a stack overflow).
pub fn install() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        show_banner();
    }));
    let Some(window) = web_sys::window() else { return };
    // One handler for both: an `ErrorEvent` carries the thrown value in `error`, a
    // `PromiseRejectionEvent` in `reason`.
    let on_error = Closure::<dyn Fn(Event)>::new(|ev: Event| {
        let field = if ev.type_() == "error" { "error" } else { "reason" };
        if js_sys::Reflect::get(&ev, &field.into()).is_ok_and(|thrown| is_trap(&thrown)) {
            show_banner();
        }
    });
    let _ = window.add_event_listener_with_callback("error", on_error.as_ref().unchecked_ref());
    let _ = window.add_event_listener_with_callback("unhandledrejection", on_error.as_ref().unchecked_ref());
    on_error.forget();
}
