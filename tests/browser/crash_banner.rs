//! In headless Chromium: a wasm trap (how a panic ends in the release build) puts a visible
//! banner with a reload button on the page; other script errors do not.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;
use web_sys::{ErrorEvent, ErrorEventInit};

fn dispatch_error(error: &JsValue) {
    let init = ErrorEventInit::new();
    init.set_error(error);
    let ev = ErrorEvent::new_with_event_init_dict("error", &init).unwrap();
    web_sys::window().unwrap().dispatch_event(&ev).unwrap();
}

fn banner() -> Option<web_sys::Element> {
    web_sys::window().unwrap().document().unwrap().get_element_by_id(control_ui::io::crash::BANNER_ID)
}

#[wasm_bindgen_test]
fn a_wasm_trap_shows_the_reload_banner_once_and_other_errors_do_not() {
    control_ui::io::crash::install();
    dispatch_error(&js_sys::Error::new("an ordinary script error").into());
    assert!(banner().is_none(), "an ordinary error is not a crash of the UI");

    dispatch_error(&js_sys::WebAssembly::RuntimeError::new("unreachable").into());
    let b = banner().expect("the trap put up the banner");
    assert_eq!(b.get_attribute("role").as_deref(), Some("alert"));
    assert!(b.text_content().unwrap().contains("reload the page"));
    let button = b.query_selector("button").unwrap().expect("a reload button");
    assert_eq!(button.text_content().as_deref(), Some("Reload page"));

    dispatch_error(&js_sys::WebAssembly::RuntimeError::new("unreachable").into());
    let count = web_sys::window()
        .unwrap()
        .document()
        .unwrap()
        .query_selector_all(&format!("#{}", control_ui::io::crash::BANNER_ID))
        .unwrap()
        .length();
    assert_eq!(count, 1, "later traps add no second banner");
}
