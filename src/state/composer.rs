//! A pane's composer: what Send does. Every message goes through the outbox; files attached a
//! moment ago wait to be kept and go with it; a reply that can answer a waiting question and
//! looks like a credential is held first (`model::credential`), as a typed answer in the dock is.
//! `/stop` and `/new` typed alone never go to the outbox (`model::command`).

use leptos::prelude::*;
use model::command::SlashCommand;
use model::credential::CredentialMatch;

use crate::io::gateway_client::GatewayClient;
use crate::state::attachment::AttachmentController;
use crate::state::chat::ChatController;
use crate::state::dock::DockController;
use crate::state::outbox::OutboxController;
use crate::state::run_settings::RunSettingsController;
use crate::state::sessions::SessionsController;

/// A reply held back because it looks like a credential.
#[derive(Debug, Clone, PartialEq)]
pub struct CredentialHold {
    pub found: CredentialMatch,
    /// Exactly the text that was held: Send anyway sends it, and nothing typed since.
    pub text: String,
    /// Send anyway was pressed once; the second, deliberate press sends.
    pub confirming: bool,
}

/// One pane's composer.
#[derive(Clone, Copy)]
pub struct ComposerController {
    /// The reply held back, if any.
    pub held: RwSignal<Option<CredentialHold>>,
    /// Files are being queued with a message: a second Send waits for it.
    pub queueing: RwSignal<bool>,
    /// Send was pressed while a model or thinking change was on its way: it goes once the
    /// change has landed (and not at all if it failed: the person chose that model).
    pub after_change: RwSignal<bool>,
    run_settings: RunSettingsController,
    chat: ChatController,
    outbox: OutboxController,
    files: AttachmentController,
    dock: DockController,
    sessions: SessionsController,
    tasks: crate::state::tasks::TasksController,
    client: GatewayClient,
}

impl ComposerController {
    pub fn new(
        chat: ChatController,
        outbox: OutboxController,
        files: AttachmentController,
        dock: DockController,
        sessions: SessionsController,
        run_settings: RunSettingsController,
        tasks: crate::state::tasks::TasksController,
        client: GatewayClient,
    ) -> Self {
        let this = ComposerController {
            held: RwSignal::new(None),
            queueing: RwSignal::new(false),
            after_change: RwSignal::new(false),
            run_settings,
            chat,
            outbox,
            files,
            dock,
            sessions,
            tasks,
            client,
        };
        Effect::new(move |_| {
            if !this.after_change.get() {
                return;
            }
            let state = run_settings.patch(&chat.session.get());
            if !state.holds_sends() {
                this.after_change.set(false);
                if state == model::run_settings::PatchState::Idle {
                    this.send();
                }
            }
        });
        this
    }

    /// Whether this connection may send messages (tracked: the view follows the scopes).
    pub fn can_write(&self) -> bool {
        self.client.hello.with(|_| protocol::methods::can_send_messages(&self.client.scopes()))
    }

    /// Send as pressed: nothing while files are being queued or when there is nothing to send;
    /// a reply that could answer a waiting question and looks like a credential is held.
    pub fn send(&self) {
        let text = self.chat.draft.get_untracked();
        let has_files = !self.files.state(&self.chat.session.get_untracked()).files.is_empty();
        if self.queueing.get_untracked() || (text.trim().is_empty() && !has_files) {
            return;
        }
        if self.run_settings.holds(&self.chat.session.get_untracked()) {
            self.after_change.set(true);
            return;
        }
        // `/stop` and `/new` typed alone are done here, never sent as chat text.
        match model::command::slash_command(&text).filter(|_| !has_files) {
            Some(SlashCommand::Stop) => {
                self.chat.set_draft(String::new());
                self.stop();
                return;
            }
            Some(SlashCommand::New) => {
                self.sessions.create_in(self.chat);
                return;
            }
            None => {}
        }
        // Every send is checked: a message goes into the transcript and the agent's context.
        if let Some(found) = model::credential::detect(&text) {
            self.held.set(Some(CredentialHold { found, text, confirming: false }));
            return;
        }
        self.enqueue(text);
    }

    /// Whether this connection may stop runs (tracked).
    pub fn can_stop(&self) -> bool {
        self.client.hello.with(|_| matches!(protocol::methods::access("chat.abort", &self.client.scopes()), Some(Ok(_))))
    }

    /// Whether the agent works in this conversation (tracked): its run, or sub-agents it started.
    pub fn working(&self) -> bool {
        self.chat.run_active.get() || self.tasks.running(&self.chat.session.get())
    }

    /// Stop the conversation's run now, and its sub-agents with it (`ChatController::stop`),
    /// saying what stays queued.
    pub fn stop(&self) {
        let session = self.chat.session.get_untracked();
        let queued = self.outbox.rows.with_untracked(|rows| rows.iter().filter(|r| r.session_key == session && r.is_unsent()).count());
        self.chat.stop(queued, self.tasks.running(&session));
    }

    /// Send anyway, pressed the second time: exactly the held text goes, if the draft still is
    /// that text; anything typed since is checked again.
    pub fn send_held(&self) {
        let Some(hold) = self.held.get_untracked() else { return };
        if self.chat.draft.get_untracked() == hold.text {
            self.enqueue(hold.text);
        } else {
            self.held.set(None);
        }
    }

    /// Queues `text` (with the draft's files) in the outbox and empties the composer. If the
    /// files cannot be collected, nothing is queued and the words and files are the draft again.
    fn enqueue(&self, text: String) {
        let ComposerController { chat, outbox, files, dock, queueing, held, .. } = *self;
        let session = chat.session.get_untracked();
        chat.set_draft(String::new());
        dock.typing_in_composer.set(false);
        held.set(None);
        let text = text.trim_end_matches('\n').to_string();
        if !files.busy() && files.state(&session).files.is_empty() {
            outbox.enqueue(&session, &text, None, None, None);
            return;
        }
        queueing.set(true);
        leptos::task::spawn_local(async move {
            // A file attached a moment ago goes with this message: wait until it is kept.
            files.settled().await;
            let attached = files.take(&session);
            if attached.is_empty() {
                outbox.enqueue(&session, &text, None, None, None);
            } else {
                match files.collect(&session, &attached).await {
                    Ok(found) => {
                        outbox.enqueue_with_files(&session, &text, found).await;
                        files.sent(&session, &attached);
                    }
                    Err(why) => {
                        chat.restore_text(&session, &text);
                        files.put_back(&session, attached, format!("Not sent: {why}"));
                    }
                }
            }
            queueing.set(false);
        });
    }
}
