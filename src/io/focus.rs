//! The window's focus and the page's clock, for decisions that need a press meant for them
//! (`model::consent`): when the window last gained focus, on the clock of events'
//! `timeStamp` (`performance.now()`).

use std::cell::OnceCell;

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;

thread_local! {
    // Reference-counted, not owned by whichever view asked first.
    static WATCHING: OnceCell<ArcRwSignal<Option<f64>>> = const { OnceCell::new() };
}

/// Milliseconds since the page's time origin, the clock of events' `timeStamp`.
pub fn now() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

/// When the window last gained focus (`None` while it has none): a signal, watched from the
/// first call on. A window that had focus when the page started counts from the time origin.
pub fn focused_at() -> ArcRwSignal<Option<f64>> {
    WATCHING.with(|w| w.get_or_init(watch).clone())
}

fn watch() -> ArcRwSignal<Option<f64>> {
    let has = web_sys::window().and_then(|w| w.document()).is_some_and(|d| d.has_focus().unwrap_or(false));
    let signal = ArcRwSignal::new(has.then_some(0.0));
    if let Some(w) = web_sys::window() {
        let (on_gain, on_lose) = (signal.clone(), signal.clone());
        let gained = Closure::<dyn Fn(web_sys::Event)>::new(move |e: web_sys::Event| on_gain.set(Some(e.time_stamp())));
        let lost = Closure::<dyn Fn(web_sys::Event)>::new(move |_: web_sys::Event| on_lose.set(None));
        let _ = w.add_event_listener_with_callback("focus", gained.as_ref().unchecked_ref());
        let _ = w.add_event_listener_with_callback("blur", lost.as_ref().unchecked_ref());
        // For the page's life.
        gained.forget();
        lost.forget();
    }
    signal
}
