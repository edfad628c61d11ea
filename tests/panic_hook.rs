//! In headless Chromium: a real panic writes its message and location to the console and puts
//! up the reload banner. Its own test binary, because a panic leaves std's panic count raised
//! for the rest of the wasm instance.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

mod common;
use common::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn a_panic_logs_its_message_and_location_and_shows_the_reload_banner() {
    let window = web_sys::window().unwrap();
    let console = js_sys::Reflect::get(&window, &"console".into()).unwrap();
    let original_error = js_sys::Reflect::get(&console, &"error".into()).unwrap();
    let logged = js_sys::Array::new();
    let spy = {
        let logged = logged.clone();
        Closure::<dyn Fn(JsValue)>::new(move |message: JsValue| {
            logged.push(&message);
        })
    };
    js_sys::Reflect::set(&console, &"error".into(), spy.as_ref()).unwrap();

    control_ui::io::crash::install();
    // The panic runs in its own task, as one in an event handler would: it cannot take the
    // test down with it, and the trap escapes to the window like any uncaught error.
    let boom = Closure::once_into_js(|| -> () { panic!("deliberate panic for the crash test") });
    window.set_timeout_with_callback_and_timeout_and_arguments_0(boom.unchecked_ref(), 0).unwrap();
    sleep(200).await;

    js_sys::Reflect::set(&console, &"error".into(), &original_error).unwrap();
    let messages: Vec<String> = logged.iter().filter_map(|m| m.as_string()).collect();
    let panic_line = messages.iter().find(|m| m.contains("deliberate panic for the crash test"));
    let panic_line = panic_line.unwrap_or_else(|| panic!("the panic message reached the console: {messages:?}"));
    assert!(panic_line.contains("tests/panic_hook.rs:"), "the console names where it panicked: {panic_line}");
    let banner = window.document().unwrap().get_element_by_id(control_ui::io::crash::BANNER_ID).expect("the panic put up the banner");
    assert_eq!(banner.get_attribute("role").as_deref(), Some("alert"));
    assert!(banner.text_content().unwrap().contains("reload the page"));
    drop(spy);
}
