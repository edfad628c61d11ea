//! In headless Chromium: `When` (the UI's type-erased `Show`) rebuilds its children only when
//! its condition flips, so what a person typed survives unrelated updates; it shows the fallback
//! otherwise.
#![cfg(target_arch = "wasm32")]

use control_ui::components::when::When;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn input() -> Option<web_sys::HtmlInputElement> {
    let doc = web_sys::window().unwrap().document().unwrap();
    doc.get_element_by_id("when-input").map(|e| e.unchecked_into())
}

fn has_fallback() -> bool {
    web_sys::window().unwrap().document().unwrap().get_element_by_id("when-fallback").is_some()
}

/// Lets the reactive system run its scheduled effects.
async fn settle() {
    let (tx, rx) = futures_channel::oneshot::channel::<()>();
    set_timeout(move || { let _ = tx.send(()); }, std::time::Duration::from_millis(20));
    let _ = rx.await;
}

#[wasm_bindgen_test]
async fn children_survive_updates_that_do_not_flip_the_condition() {
    let open = RwSignal::new(true);
    let noise = RwSignal::new(0u32);
    let builds = StoredValue::new(0u32);
    let _handle = leptos::mount::mount_to_body(move || {
        view! {
            <When when=move || open.get() && noise.get() < 1000 fallback=|| view! { <p id="when-fallback">"closed"</p> }>
                {builds.update_value(|n| *n += 1)}
                <input id="when-input"/>
            </When>
        }
    });
    settle().await;
    input().expect("shown while true").set_value("typed by a person");
    noise.set(1); // the condition re-runs and stays true
    settle().await;
    assert_eq!(input().unwrap().value(), "typed by a person");
    assert_eq!(builds.get_value(), 1, "children were built again although the condition did not flip");
    assert!(!has_fallback());

    open.set(false);
    settle().await;
    assert!(input().is_none());
    assert!(has_fallback());

    open.set(true);
    settle().await;
    assert_eq!(input().expect("shown again").value(), "", "a flip builds the children afresh");
    assert_eq!(builds.get_value(), 2);
    assert!(!has_fallback());
}
