//! "While you were away" (`model::away`): when the person comes back to the page (opens it, or
//! shows its tab again) after a while, one card says what finished, what failed and what still
//! waits. When they were last here is kept per gateway, written whenever the page hides.

use leptos::prelude::*;
use model::away::AwaySummary;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::io::browser;
use crate::io::gateway_client::{GatewayClient, Status};
use crate::state::dock::DockController;
use crate::state::sessions::SessionsController;

fn seen_key(gateway: &str) -> String {
    format!("ocui.away.v1:{gateway}")
}

fn last_seen(gateway: &str) -> i64 {
    browser::local_get(&seen_key(gateway)).and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn hidden() -> bool {
    web_sys::window().and_then(|w| w.document()).is_some_and(|d| d.hidden())
}

#[derive(Clone, Copy)]
pub struct AwayController {
    pub summary: RwSignal<Option<AwaySummary>>,
    /// Away since (ms), until the rows to summarise have been read.
    pending: StoredValue<Option<i64>>,
}

impl AwayController {
    pub fn new(client: GatewayClient, sessions: SessionsController, dock: DockController) -> AwayController {
        let gateway = client.url.get_untracked();
        let c = AwayController { summary: RwSignal::new(None), pending: StoredValue::new(Some(last_seen(&gateway))) };
        browser::local_set(&seen_key(&gateway), &(browser::now_ms() as i64).to_string());
        // Once connected with the list read: the card, if anything happened.
        Effect::new(move |_| {
            let ready = client.status.get() == Status::Connected && !sessions.loading.get() && sessions.list.with(|l| !l.rows.is_empty());
            if !ready || hidden() {
                return;
            }
            let Some(since) = c.pending.get_value() else { return };
            c.pending.set_value(None);
            let now = browser::now_ms() as i64;
            let waiting = dock.dock.with_untracked(|d| d.entries.len());
            let summary = sessions.list.with_untracked(|l| model::away::summarize(since, now, &l.rows, waiting));
            if summary.is_some() {
                c.summary.set(summary);
            }
        });
        // Hidden: the person leaves now. Shown again: away since then.
        if let Some(doc) = web_sys::window().and_then(|w| w.document()) {
            let on_change = Closure::<dyn Fn()>::new(move || {
                let gateway = client.url.get_untracked();
                if hidden() {
                    browser::local_set(&seen_key(&gateway), &(browser::now_ms() as i64).to_string());
                } else {
                    c.pending.set_value(Some(last_seen(&gateway)));
                    // Read again now that the page shows (the effect above).
                    sessions.list.update(|_| {});
                }
            });
            let _ = doc.add_event_listener_with_callback("visibilitychange", on_change.as_ref().unchecked_ref());
            on_change.forget();
        }
        c
    }

    pub fn dismiss(&self) {
        self.summary.set(None);
    }
}
