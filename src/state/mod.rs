//! Controllers: reactive state for the views, each wrapping the `model::` module of the same
//! name (`chat` wraps the protocol's transcript rules and `model::offline`). They hold signals,
//! call the pure rules, and carry out the effects those return through `crate::io`.

pub mod async_q;
pub mod attachment;
pub mod attention;
pub mod away;
pub mod chat;
pub mod commands;
pub mod composer;
pub mod consent;
pub mod dock;
pub mod export;
pub mod message_actions;
pub mod outbox;
pub mod panes;
pub mod push;
pub mod run_settings;
pub mod sessions;
pub mod tasks;

/// Runs `f` once, `ms` after the first of any number of calls made meanwhile: a burst of
/// changes is one write or one read. `due` remembers that a run is coming.
pub fn debounce(due: leptos::prelude::StoredValue<bool>, ms: u64, f: impl FnOnce() + 'static) {
    use leptos::prelude::{GetValue, SetValue};
    if due.get_value() {
        return;
    }
    due.set_value(true);
    leptos::prelude::set_timeout(
        move || {
            due.set_value(false);
            f();
        },
        std::time::Duration::from_millis(ms),
    );
}
