//! Conversation panes: which conversations are open side by side, in the URL
//! (`?session=A&pane=B`), with one conversation controller per pane.
//!
//! The controllers are made once, at start, for the most panes a page can hold: a closed pane's
//! controller lets go of its conversation and waits, so nothing that listens to the gateway ever
//! outlives its owner, and reopening costs nothing. Everything else (the dock's requests and
//! drafts, the outbox) stays one per page, whatever the number of panes.

use leptos::prelude::*;
use model::url::ChatRoute;

use crate::io::browser;
use crate::io::gateway_client::GatewayClient;
use crate::io::storage::LocalDb;
use crate::state::chat::{ChatController, route_from_url};

/// The most panes a page holds.
pub const MAX_PANES: usize = 3;

/// The panes of this page.
#[derive(Clone, Copy)]
pub struct Panes {
    /// Every controller, open or not; a pane is an index into this.
    pub chats: StoredValue<Vec<ChatController>>,
    /// The open panes, left to right.
    pub open: RwSignal<Vec<usize>>,
    /// The pane shown on a narrow screen (where one pane is shown at a time).
    pub active: RwSignal<usize>,
}

/// The extra panes the address names (`pane=` after `session=`).
fn extra_panes_from_url() -> Vec<String> {
    browser::page_query().panes.iter().map(|s| protocol::chat::canonical_session_key(s)).take(MAX_PANES - 1).collect()
}

impl Panes {
    pub fn new(client: GatewayClient, db: LocalDb) -> Panes {
        let extra = extra_panes_from_url();
        let mut chats = vec![ChatController::new(client, db, route_from_url(), true)];
        for i in 1..MAX_PANES {
            let route = extra.get(i - 1).cloned().map(ChatRoute::Key);
            let open = route.is_some();
            chats.push(ChatController::new(client, db, route, open));
        }
        let open = RwSignal::new((0..=extra.len()).collect::<Vec<_>>());
        let p = Panes { chats: StoredValue::new(chats), open, active: RwSignal::new(0) };
        // The address follows the layout, so a reload or a shared link restores it.
        Effect::new(move |_| {
            let sessions: Vec<String> = p.open.get().iter().map(|&i| p.chat(i).session.get()).collect();
            let query = model::url::page_query(&sessions);
            if !query.is_empty() {
                browser::set_page_query(&query);
            }
        });
        // Two panes on one conversation share its composer draft: typing in one shows in the
        // other at once.
        for i in 0..MAX_PANES {
            let me = p.chat(i);
            Effect::new(move |_| {
                let text = me.draft.get();
                let session = me.session.get_untracked();
                if session.is_empty() {
                    return;
                }
                for other in p.chats.get_value() {
                    if other.session.get_untracked() == session && other.draft.with_untracked(|t| *t != text) {
                        other.draft.set(text.clone());
                    }
                }
            });
        }
        p
    }

    pub fn chat(&self, i: usize) -> ChatController {
        self.chats.with_value(|c| c[i])
    }

    /// The controllers of open panes.
    pub fn open_chats(&self) -> Vec<ChatController> {
        self.open.with(|o| o.iter().map(|&i| self.chat(i)).collect())
    }

    /// Opens another pane on the conversation of the pane it was asked from.
    pub fn add(&self, from: usize) {
        let open = self.open.get_untracked();
        let Some(free) = (0..MAX_PANES).find(|i| !open.contains(i)) else {
            return;
        };
        let session = self.chat(from).session.get_untracked();
        self.chat(free).open_on(&session);
        self.open.update(|o| o.push(free));
        self.active.set(free);
    }

    /// Closes a pane. Its drafts and queued messages are not touched.
    pub fn close(&self, i: usize) {
        if self.open.with_untracked(|o| o.len() <= 1 || !o.contains(&i)) {
            return;
        }
        self.open.update(|o| o.retain(|x| *x != i));
        self.chat(i).close();
        if self.active.get_untracked() == i {
            self.active.set(self.open.with_untracked(|o| o[0]));
        }
    }
}
