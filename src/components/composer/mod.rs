//! The composer. Enter sends, Shift+Enter adds a line; every message goes through the
//! outbox. While a blocking question is open, the dock takes the composer's place; while
//! it is collapsed, the composer says that a plain reply can answer it.

use leptos::prelude::*;

use crate::chat::ChatController;
use crate::components::credential_notice::CredentialNotice;
use crate::gateway_client::{GatewayClient, Status};
use crate::outbox::OutboxController;
use crate::questions::{DockController, DockView};

/// The message composer for the current session.
#[component]
pub fn Composer() -> impl IntoView {
    let ctl = expect_context::<DockController>();
    let chat = expect_context::<ChatController>();
    let outbox = expect_context::<OutboxController>();
    let client = expect_context::<GatewayClient>();
    // Only this pane's dock can take this pane's composer: a question in another pane leaves
    // this one free (openclaw#118787).
    let view = expect_context::<DockView>();
    let blocked = Memo::new(move |_| {
        ctl.dock.with(|d| d.expanded) && view.current_is_blocking() && ctl.deep_link.get().is_none()
    });
    let question_waiting =
        Memo::new(move |_| !ctl.dock.with(|d| d.expanded) && view.blocking_waits());
    let can_write = move || {
        client.hello.with(|_| {
            let s = client.scopes();
            s.iter().any(|x| x == "operator.write" || x == "operator.admin" || x == "operator.sessions.write")
        })
    };
    // A reply while a blocking question waits can answer it: one that looks like a credential
    // is held like a typed answer in the dock (the text it was held for, and whether Send
    // anyway was pressed once).
    let held = RwSignal::new(None::<(model::credential::CredentialMatch, String, bool)>);
    let replies_to_question = move || ctl.dock.with_untracked(|d| d.entries.iter().any(|e| !e.is_async()));
    let enqueue = move |text: String| {
        outbox.enqueue(&chat.session.get_untracked(), text.trim_end_matches('\n'), None, None, None);
        chat.set_draft(String::new());
        ctl.typing_in_composer.set(false);
        held.set(None);
    };
    let send = move || {
        let text = chat.draft.get_untracked();
        if text.trim().is_empty() {
            return;
        }
        if replies_to_question() {
            if let Some(found) = model::credential::detect(&text) {
                held.set(Some((found, text, false)));
                return;
            }
        }
        enqueue(text);
    };
    let credential_typed = move || chat.draft.with(|t| model::credential::detect(t).is_some());
    let running = move || chat.run_active.get() || chat.streams.with(|s| s.values().any(|r| r.state == "streaming"));
    // Something else can take the composer's place (here: a read-only connection); the dock
    // above stays available either way.
    let read_only = move || client.status.get() == Status::Connected && !can_write();
    view! {
        <Show when=move || !blocked.get() && read_only()>
            <p class="composer-replacement" role="note" data-testid="composer-replacement">
                "This conversation is read-only here: the connection has no operator.write scope. Questions above can still be answered."
            </p>
        </Show>
        <Show when=move || !blocked.get() && !read_only()>
            <form class="composer" on:submit=move |ev| { ev.prevent_default(); send(); }>
                <Show when=move || question_waiting.get()>
                    <p class="composer__hint" data-testid="composer-hint">
                        "A question is waiting. A plain reply can answer it: a number, an option label or your own words (commas for several choices)."
                    </p>
                </Show>
                {move || held.get().map(|(found, text, confirming)| {
                    let text = StoredValue::new(text);
                    view! {
                        <CredentialNotice
                            found=found
                            confirming=confirming
                            on_edit=move |_| held.set(None)
                            on_send_anyway=move |_| held.update(|h| if let Some(h) = h { h.2 = true })
                            on_confirm=move |_| {
                                // Exactly the text that was held; anything typed since is checked again.
                                if chat.draft.get_untracked() == text.get_value() { enqueue(text.get_value()) } else { held.set(None) }
                            }
                        />
                    }
                })}
                <div class="composer__row">
                    <label class="composer__label">
                        <span class="sr-only">"Message"</span>
                        <textarea
                            rows="2"
                            name="message"
                            placeholder="Message the agent (Enter sends, Shift+Enter adds a line)"
                            prop:value=move || chat.draft.get()
                            on:input=move |ev| {
                                let text = event_target_value(&ev);
                                ctl.typing_in_composer.set(!text.trim().is_empty());
                                chat.set_draft(text);
                                held.set(None);
                            }
                            on:focus=move |_| ctl.typing_in_composer.set(!chat.draft.get_untracked().trim().is_empty())
                            on:blur=move |_| ctl.typing_in_composer.set(false)
                            on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                                if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() && !ev.ctrl_key() && !ev.alt_key() && !ev.meta_key() {
                                    ev.prevent_default();
                                    send();
                                }
                            }
                        ></textarea>
                    </label>
                    <div class="composer__buttons">
                        <Show when=running>
                            <button type="button" class="composer__stop" on:click=move |_| chat.stop()>"Stop"</button>
                        </Show>
                        <button type="submit" class="composer__send">"Send"</button>
                    </div>
                </div>
                <Show when=credential_typed>
                    <p class="unsaved-note" data-testid="composer-not-saved">"Kept in this tab only: this looks like a credential, so it is not saved in this browser."</p>
                </Show>
            </form>
        </Show>
    }
}
