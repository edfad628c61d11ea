//! A pane's message actions (`model::message_actions`): Copy as Markdown, Rewind to here and
//! Fork from here. Rewind and fork ask first, go one at a time, and put the message's text
//! back into a composer: this conversation's after a rewind, the new one's after a fork.

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::message_actions::{ActionState, Context, Cut, Offer, params, read_done};
use model::transcript::TranscriptRow;
use protocol::methods::method;

use crate::io::gateway_client::{GatewayClient, Status};
use crate::state::chat::ChatController;
use crate::state::sessions::SessionsController;

/// What the page says after a Copy.
#[derive(Clone, PartialEq)]
pub struct Copied {
    pub key: String,
    /// `None`: copied; else why not.
    pub failed: Option<String>,
}

#[derive(Clone, Copy)]
pub struct MessageActionsController {
    client: GatewayClient,
    chat: ChatController,
    sessions: SessionsController,
    pub state: RwSignal<ActionState>,
    pub copied: RwSignal<Option<Copied>>,
    /// What a rewind or fork did, said in the conversation it left on screen: `(session, words)`.
    pub done: RwSignal<Option<(String, String)>>,
}

impl MessageActionsController {
    pub fn new(client: GatewayClient, chat: ChatController, sessions: SessionsController) -> Self {
        let this = MessageActionsController {
            client,
            chat,
            sessions,
            state: RwSignal::new(ActionState::Idle),
            copied: RwSignal::new(None),
            done: RwSignal::new(None),
        };
        // Another conversation in the pane: nothing asked about the last one stays.
        Effect::new(move |last: Option<String>| {
            let now = chat.session.get();
            if last.is_some_and(|l| l != now) {
                this.state.update(ActionState::cancel);
                this.copied.set(None);
            }
            now
        });
        this
    }

    /// What `row` offers now (tracked: scopes, connection, the conversation's runs).
    pub fn offer(&self, row: &TranscriptRow) -> Offer {
        let ctx = Context {
            may_rewind: self.sessions.may(method::SESSIONS_REWIND),
            may_fork: self.sessions.may(method::SESSIONS_FORK),
            run_active: self.chat.run_active.get(),
            connected: self.client.status.get() == Status::Connected,
        };
        model::message_actions::offer(row, ctx)
    }

    /// Copies the message as written, and says whether the browser took it.
    pub fn copy(&self, row: &TranscriptRow) {
        let (key, text) = (row.key.clone(), model::message_actions::copy_text(row));
        let copied = self.copied;
        let Some(w) = web_sys::window() else { return };
        let promise = w.navigator().clipboard().write_text(&text);
        spawn_local(async move {
            let failed = wasm_bindgen_futures::JsFuture::from(promise)
                .await
                .err()
                .map(|e| format!("The browser did not allow copying ({}).", crate::io::browser::js_error_text(&e)));
            copied.set(Some(Copied { key, failed }));
        });
    }

    pub fn ask(&self, key: &str, cut: Cut) {
        self.done.set(None);
        self.state.update(|s| s.ask(key, cut));
    }

    pub fn cancel(&self) {
        self.state.update(ActionState::cancel);
    }

    /// The click on the question's own button: sends the rewind or fork once, then shows the
    /// conversation it leaves and puts the message's text into that conversation's composer.
    pub fn confirm(&self, key: &str, entry: &str) {
        let Some(cut) = self.state.try_update(|s| s.confirm(key)).flatten() else {
            return;
        };
        let (this, session, entry) = (*self, self.chat.session.get_untracked(), entry.to_string());
        spawn_local(async move {
            let answer = this.client.request(cut.method(), params(&session, &entry)).await;
            let result = answer.map_err(|e| e.to_string()).and_then(|v| read_done(cut, &session, &v));
            this.state.update(|s| s.settle(&result));
            let Ok(done) = result else { return };
            // The pane has moved on meanwhile: it is not pulled back (the rewind's reload comes
            // with `sessions.changed`, and the fork is in the list).
            let still_here = this.chat.session.get_untracked() == session;
            if let ActionState::Done { said, .. } = this.state.get_untracked() {
                this.done.set(Some((done.session.clone(), said)));
                this.state.set(ActionState::Idle);
            }
            match cut {
                Cut::Rewind => {
                    if let Some(text) = &done.editor_text {
                        this.chat.restore_text(&session, text);
                    }
                    if still_here {
                        this.chat.reload().await;
                    }
                }
                Cut::Fork if !still_here => {
                    if let Some(text) = &done.editor_text {
                        this.chat.restore_text(&done.session, text);
                    }
                    this.sessions.reload().await;
                }
                Cut::Fork => {
                    this.sessions.open_in(this.chat, &done.session);
                    if let Some(text) = &done.editor_text {
                        this.chat.restore_text(&done.session, text);
                    }
                    this.sessions.reload().await;
                }
            }
        });
    }
}
